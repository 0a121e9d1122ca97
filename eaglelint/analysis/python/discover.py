"""From command-line paths to the list of Python files to check.

Why careful walking: pre-commit and CI hand eaglelint arbitrary trees, with
symlink loops, broken links and paths that do not exist; each becomes a per-path
error and the walk goes on.
"""

from __future__ import annotations

import errno
import fnmatch
import importlib.util
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", "node_modules"}


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)


CHECKOUT_LAYOUTS = ("python/sglang/srt/models", "sglang/srt/models", "srt/models")


@dataclass(frozen=True)
class CheckoutModels:
    """A models folder found with no PATH given: where, the folder it was found from (the
    working directory or one above it), and the git work tree the walk stayed in (None
    outside one: then only the working directory was looked at)."""

    models: Path
    found_from: Path
    work_tree: Path | None


def git_work_tree(folder: Path) -> Path | None:
    """The root of the git work tree `folder` is in (the first folder up holding `.git`)."""
    return next((f for f in (folder, *folder.parents) if (f / ".git").exists()), None)


def checkout_models_dir(cwd: Path | None = None) -> CheckoutModels | None:
    """The models folder of the checkout the user stands in: `python/sglang/srt/models`
    (SGLang's repository), `sglang/srt/models` or `srt/models` under the working directory,
    or the working directory itself when it is an `srt/models` folder. Inside a git work
    tree the folders above are looked at too, up to its root (and a `srt/models` folder
    the working directory is deeper in); outside one, only the working directory: a
    sibling folder of `~/scratch` is not "this checkout"."""
    here = Path(os.path.abspath(cwd or Path.cwd()))
    top = git_work_tree(here)
    folders = [here] if top is None else [here, *(f for f in here.parents if f.is_relative_to(top))]
    for folder in folders:
        if folder.name == "models" and folder.parent.name == "srt" and (folder == here or top is not None):
            return CheckoutModels(folder, folder, top)
        if folder.name == "srt" and (folder / "models").is_dir():
            return CheckoutModels(folder / "models", folder, top)
        for layout in CHECKOUT_LAYOUTS:
            if (folder / layout).is_dir():
                return CheckoutModels(folder / layout, folder, top)
    return None


def installed_models_dir() -> Path | None:
    """`srt/models` of the importable sglang package (located, never imported)."""
    try:
        spec = importlib.util.find_spec("sglang")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "srt" / "models"
        if candidate.is_dir():
            return candidate
    return None


def discover(paths: list[Path], exclude: Sequence[str] = ()) -> Discovery:
    out = Discovery()
    seen: set[str] = set()  # paths as text: a warm run is mostly this walk, and a Path hashes slowly

    def add(path: str) -> None:
        key = os.path.abspath(path)
        if key not in seen and not _excluded(key, exclude):
            seen.add(key)
            out.files.append(Path(key))

    for path in paths:
        if path.is_symlink() and not path.exists():
            out.errors.append((path, _dangling(path)))
        elif path.is_file():
            add(str(path))
        elif path.is_dir():
            for file in _walk(path, out.errors, exclude):
                add(file)
        elif not path.exists():
            out.errors.append((path, "no such file or directory"))
        else:
            out.errors.append((path, "not a regular file or directory"))
    return out


def _dangling(link: Path | str) -> str:
    """Why a symbolic link leads nowhere: a loop of links, or a missing target."""
    try:
        os.stat(link)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return "broken symbolic link"


def _excluded(path: str, patterns: Sequence[str]) -> bool:
    """Whether a pattern matches the path (with / between its parts), its last part, or a
    tail of it that starts at a part."""
    if not patterns:
        return False
    text = path.replace(os.sep, "/")
    name = os.path.basename(path)
    return any(
        fnmatch.fnmatch(text, pat) or fnmatch.fnmatch(name, pat) or fnmatch.fnmatch(text, f"*/{pat}")
        for pat in patterns
    )


def _walk(root: Path, errors: list[tuple[Path, str]], exclude: Sequence[str]) -> Iterator[str]:
    """Python files under root, sorted, following directory links once each."""
    visited: set[str] = set()

    def on_error(exc: OSError) -> None:
        errors.append((Path(exc.filename or root), exc.strerror or str(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=on_error, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in visited:
            errors.append((Path(dirpath), "directory symlink loop (already visited)"))
            dirnames[:] = []
            continue
        visited.add(real)
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in SKIP_DIRS and not d.startswith(".")
            and not (exclude and _excluded(str(Path(dirpath, d)), exclude))  # as given: `./x` is `x`
        )
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            file = os.path.join(dirpath, name)
            try:  # one stat per file (following links), not three
                regular = stat.S_ISREG(os.stat(file).st_mode)
            except OSError:
                regular = None
            if regular is None and os.path.islink(file):
                errors.append((Path(file), _dangling(file)))
            elif not regular:
                errors.append((Path(file), "not a regular file (a pipe, socket or device?)"))
            else:
                yield file


def tree_of(path: Path) -> Path | None:
    """The `models` folder that holds a file (SGLang's layout), or None outside one."""
    path = Path(os.path.abspath(path))
    for parent in path.parents:
        if parent.name == "models":
            return parent
    return None


def tree_files(changed: set[Path]) -> list[Path]:
    """The models folders of the changed files, walked; a file outside one: its own folder only."""
    trees = sorted({t for t in map(tree_of, changed) if t is not None})
    files = discover(trees).files
    for folder in sorted({p.parent for p in changed if tree_of(p) is None}):
        files += [Path(os.path.abspath(f)) for f in sorted(folder.glob("*.py")) if f.is_file()]
    return list(dict.fromkeys(files))
