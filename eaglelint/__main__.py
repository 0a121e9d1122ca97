"""`python -m eaglelint` runs the command line."""

from .cli.main import entry

entry()
