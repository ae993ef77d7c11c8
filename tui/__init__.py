"""User interfaces over the core: the Typer CLI (``tui.cli``) and, later, the Textual app."""
