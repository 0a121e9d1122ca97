"""The command line: the click group and the lint commands (`main`), the options they share
(`options`), and the commands that run no lint (`info`, `support`, `cache`).

`entry` is the console script's (`eaglelint.cli:entry`) and `python -m eaglelint`'s entry point;
`main` and `cli` are re-exported for programs that run the command line and go on.
"""

from .main import cli, entry, main

__all__ = ["cli", "entry", "main"]
