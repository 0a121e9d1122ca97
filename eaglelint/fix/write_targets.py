"""Where `fix --write` may write: never into an installed package tree nobody named, nor
into a release tree fetched for the demo and the tests unless asked to on purpose.

Why: with no PATH, or with a PATH such as `.` above a virtual environment that the
walk does not recognise (`env/`, `python/`), the files found can be those of an
installed sglang. A package installed in site-packages (dist-packages on Debian) is
shared by every program of that environment, and the next `pip install` overwrites
an edit there without a word: such a file is written only if a given path lies in
that tree, i.e. the user pointed at it.

A release fetched by scripts/fetch_sglang.py (the README's first command checks one)
is read by the tests as released: an edit there makes them fail, and nothing in it is
the user's code. Naming it is not enough, since the report of a check of that tree
names its files; only `--allow-fetched-release` lets a fix write there. The tree is
known by the marker the fetch writes at its root (FETCHED_MARKER), not by its path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

INSTALLED_TREES = ("site-packages", "dist-packages")
FETCHED_MARKER = ".eaglelint-fetched"  # at a fetched release tree's root, with the digest of its files
ALLOW_FETCHED = "--allow-fetched-release"


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


def fetched_tree(path: Path | str) -> Path | None:
    """The fetched release tree `path` (links resolved) lies in, if any: the nearest folder
    up that holds FETCHED_MARKER."""
    return fetched_trees([path])[str(path)]


def fetched_trees(paths: Iterable[Path | str]) -> dict[str, Path | None]:
    """`fetched_tree` of each path, keyed by the path as a string. Each distinct path is
    resolved once and each folder asked for the marker once: a report's findings share a
    few files, and those files one tree."""
    marked: dict[str, bool] = {}
    trees: dict[str, Path | None] = {}
    for path in paths:
        key = str(path)
        if key not in trees:
            trees[key] = _marked_folder(os.path.dirname(os.path.realpath(path)), marked)
    return trees


def _marked_folder(folder: str, marked: dict[str, bool]) -> Path | None:
    """The nearest of `folder` and the folders above it that holds FETCHED_MARKER; what each
    folder asked holds is noted in `marked`."""
    while True:
        if folder not in marked:
            marked[folder] = os.path.isfile(os.path.join(folder, FETCHED_MARKER))
        if marked[folder]:
            return Path(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def fetched_refusal(path: Path) -> str | None:
    """Why fix must not write `path` unless allowed (None when it may): it lies in a fetched release."""
    tree = fetched_tree(path)
    if tree is None:
        return None
    return (f"in a release fetched for the demo and the tests ({tree}), which read it as released; "
            f"fix your own checkout, or pass {ALLOW_FETCHED} to write there on purpose")


def write_refusal(path: Path, named: list[Path], allow_fetched: bool = False) -> str | None:
    """Why fix must not write `path`: a fetched release (unless allowed), or an installed
    package tree no named path lies in; None when it may."""
    return (None if allow_fetched else fetched_refusal(path)) or installed_refusal(path, named)
