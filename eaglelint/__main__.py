"""`python -m eaglelint` runs the command line."""

from .cli import main

main()
