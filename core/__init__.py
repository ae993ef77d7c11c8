"""The headless core of claimscope: sources, retrieval, verification, scoring, pipeline.

Never imports ``tui`` or textual (a test enforces this in a subprocess): the CLI, the TUI
and evaluation scripts all drive this same code.
"""
