"""The command line: the click group and the lint commands (`main`), the options they share
(`options`), and the commands that run no lint (`info`, `support`, `cache`).

`main` and `cli` are re-exported so that the console script `eaglelint.cli:main` and
`python -m eaglelint` keep their names.
"""

from .main import cli, main

__all__ = ["cli", "main"]
