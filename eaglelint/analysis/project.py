"""The module index: where an import points on disk, and each module's summary, parsed lazily.

Why on disk and not through importlib: eaglelint never imports scanned code, and
SGLang's `sglang/srt` is a namespace package (no `__init__.py`), so the import root
is found by searching upward from the importing file for the directory that holds
the imported module path. Only imports inside the file's own top-level package (or
siblings of the file) are followed: torch, transformers and friends stay opaque.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from .cache import SummaryCache
from .sources import DEFAULT_MAX_FILE_SIZE, Source, SourceError, decode_source, parse_source, read_bytes

if TYPE_CHECKING:  # the summariser is imported by the first file summarised, not by a warm run
    from .summary import ModuleSummary

INTERNAL = "internal error: "


def internal_error(exc: Exception) -> str:
    return f"{INTERNAL}{type(exc).__name__}: {exc} (run with --debug for the traceback)"


def summarize_raw(path: Path, raw: bytes, debug: bool = False) -> ModuleSummary | str:
    """The summary of a file's bytes, or why there is none. Top level, so workers can run it."""
    from .summary import summarize

    try:
        src = decode_source(path, raw)
        return summarize(parse_source(src), src.text, str(path))
    except SourceError as exc:
        return str(exc)
    except RecursionError:
        return "code is nested too deeply to analyse"
    except Exception as exc:  # a bug on one odd file must not stop the run
        if debug:
            raise
        return internal_error(exc)


class Project:
    def __init__(self, cache: SummaryCache | None = None) -> None:
        self.cache = cache
        self.debug = False  # let an unexpected error propagate instead of recording it for the file
        self.max_file_size = DEFAULT_MAX_FILE_SIZE  # a larger file is refused unread (max-file-size)
        self._summaries: dict[Path, ModuleSummary | None] = {}
        self.errors: dict[Path, str] = {}
        # content key of every file this run read, hashed once: the cache key of its
        # summary, a part of the run key, and what a later write is compared against
        self.digests: dict[Path, str] = {}
        self._lookups: dict[tuple[Path, str], Path | None] = {}
        self.parsed: list[Path] = []

    def note_read(self, path: Path, raw: bytes) -> str:
        key = SummaryCache.key(raw)
        self.digests[Path(os.path.abspath(path))] = key
        return key

    def changed_since_read(self, path: Path, raw: bytes) -> bool:
        """Whether `raw` differs from what this run read at `path` before (another process
        wrote it since): findings made from the old bytes must not be applied to the new."""
        known = self.digests.get(Path(os.path.abspath(path)))
        return known is not None and known != SummaryCache.key(raw)

    def source(self, path: Path) -> Source:
        """The file as it is now, decoded, read through the same guard as every other read
        (a FIFO is refused, max-file-size holds): what a fix edits. SourceError says why not."""
        return decode_source(path, read_bytes(path, self.max_file_size))

    def summary(self, path: Path, raw: bytes | None = None) -> ModuleSummary | None:
        """Summary of a .py file, or None (reason in `errors`) when it cannot be parsed.

        `raw` is the file's content when the caller has already read it.
        """
        path = Path(os.path.abspath(path))
        if path not in self._summaries:
            self._summaries[path] = self._load(path, raw)
        return self._summaries[path]

    def _load(self, path: Path, raw: bytes | None, computed: ModuleSummary | str | None = None):
        if raw is None:
            try:
                raw = read_bytes(path, self.max_file_size)
            except SourceError as exc:
                self.errors[path] = str(exc)
                return None
        digest = self.note_read(path, raw)
        key = digest if self.cache else None
        value = self.cache.get(key) if self.cache is not None and key else None
        if value is None:
            value = computed if computed is not None else summarize_raw(path, raw, self.debug)
            self.parsed.append(path)
            if self.cache is not None and key and not (isinstance(value, str) and value.startswith(INTERNAL)):
                self.cache.put(key, value)
        if isinstance(value, str):
            self.errors[path] = value
            return None
        value.path = str(path)
        return value

    def prefetch(self, items: list[tuple[Path, bytes]], jobs: int) -> None:
        """Summarise many files at once in `jobs` processes (cache misses only).

        `items` are files as the caller has just read and noted them (`note_read`)."""
        todo = []
        for path, raw in items:
            path = Path(os.path.abspath(path))
            key = self.digests.get(path) or self.note_read(path, raw)
            if path not in self._summaries and not (self.cache and self.cache.has(key)):
                todo.append((path, raw))
        if jobs <= 1 or len(todo) < 2:
            return
        from concurrent.futures import ProcessPoolExecutor  # only here: its import costs every run

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = pool.map(summarize_raw, [p for p, _ in todo], [r for _, r in todo],
                               [self.debug] * len(todo), chunksize=4)
            for (path, raw), value in zip(todo, results, strict=True):
                self._summaries[path] = self._load(path, raw, value)

    def resolve_module(self, module: str, from_path: Path) -> Path | None:
        """File (`x.py`, `pkg/__init__.py`) or namespace directory that `module` names.

        `module` may be relative (leading dots), as written in a `from` import.
        """
        key = (from_path.parent, module)
        if key not in self._lookups:
            self._lookups[key] = self._find(module, from_path)
        return self._lookups[key]

    def _find(self, module: str, from_path: Path) -> Path | None:
        level = len(module) - len(module.lstrip("."))
        parts = [p for p in module[level:].split(".") if p]
        if level:
            base = from_path.parent
            for _ in range(level - 1):
                base = base.parent
            found = _locate(base, parts)
            return found if found is not None or parts else base
        if not parts:
            return None
        roots = [from_path.parent]
        roots += [a.parent for a in from_path.parents if a.name == parts[0]]
        for root in roots:
            found = _locate(root, parts)
            if found is not None:
                return found
        return None

    def submodule(self, package: Path, name: str) -> Path | None:
        """`package.name` where package is a module location from resolve_module."""
        directory = package.parent if package.name == "__init__.py" else package
        if not directory.is_dir():
            return None
        return _locate(directory, [name])


def _locate(base: Path, parts: list[str]) -> Path | None:
    target = base.joinpath(*parts) if parts else base
    if parts:
        as_file = target.with_name(target.name + ".py")
        if as_file.is_file():
            return as_file
    init = target / "__init__.py"
    if init.is_file():
        return init
    if target.is_dir() and parts:
        return target
    return None
