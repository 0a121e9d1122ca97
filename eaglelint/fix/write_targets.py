"""Where `fix --write` may write: never into an installed package tree nobody named.

Why: with no PATH, or with a PATH such as `.` above a virtual environment that the
walk does not recognise (`env/`, `python/`), the files found can be those of an
installed sglang. A package installed in site-packages (dist-packages on Debian) is
shared by every program of that environment, and the next `pip install` overwrites
an edit there without a word: such a file is written only if a given path lies in
that tree, i.e. the user pointed at it.
"""

from __future__ import annotations

import os
from pathlib import Path

INSTALLED_TREES = ("site-packages", "dist-packages")


def installed_tree(path: Path) -> Path | None:
    """The site-packages or dist-packages folder that `path` (links resolved) lies in, if any."""
    return next((p for p in Path(os.path.realpath(path)).parents if p.name in INSTALLED_TREES), None)


def installed_refusal(path: Path, named: list[Path]) -> str | None:
    """Why fix must not write `path` (None when it may): it lies in an installed package
    tree, and none of the `named` paths is that tree or lies in it."""
    tree = installed_tree(path)
    if tree is None or any(installed_tree(n) == tree or os.path.realpath(n) == str(tree) for n in named):
        return None
    return f"in an installed package ({tree}) that no PATH named; pass that folder (or the file) to fix it there"
