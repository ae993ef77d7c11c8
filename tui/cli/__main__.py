"""``python -m tui.cli``: the same as the ``claimscope`` console script."""

from tui.cli import main

main()
