"""The command palette (ctrl+p): every workbench action, plus one entry per theme."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class WorkbenchCommands(Provider):
    """Commands come from the app (``palette_commands``), so the palette and the key
    bindings never drift apart."""

    def _commands(self):
        app = self.app
        yield from app.palette_commands()
        for name in app.claimscope_themes:
            yield f"Theme: {name}", f"Switch to the {name} theme", partial(app.set_theme_name, name)

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
