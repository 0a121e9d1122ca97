"""The module index: where an import points on disk, and each module's summary, parsed lazily.

It is also the one owner of a scanned file's bytes: every stage that reads a file of the
tree asks it (`raw`, `source`, `tree`, `summary`), so each file is read once, through
the FIFO and size guard of `sources.read_bytes`, its digest is noted for the cache, and
its syntax tree is parsed once. `tests/test_architecture.py` keeps other modules from
reading source files themselves.

Why on disk and not through importlib: eaglelint never imports scanned code, and
SGLang's `sglang/srt` is a namespace package (no `__init__.py`), so the import root
is found by searching upward from the importing file for the directory that holds
the imported module path. Only imports inside the file's own top-level package (or
siblings of the file) are followed: torch, transformers and friends stay opaque.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..store.cache import SummaryCache
from ..store.cache_codec import StatusMemo
from ..syntax.sources import (
    DEFAULT_MAX_FILE_SIZE,
    Source,
    SourceError,
    decode_source,
    parse_source,
    read_bytes,
    read_bytes_and_stat,
)

if TYPE_CHECKING:  # the summariser is imported by the first file summarised, not by a warm run
    import ast

    from .summary import ModuleSummary

INTERNAL = "internal error: "
# the key of `Project.analyses` under which a check run keeps its resolver (checks/context.py),
# with the count of files that could not be parsed when it was made
CHECK_RESOLVER = "check.resolver"
# a file whose mtime or ctime is this close to the moment it was read may be written again
# within the same timestamp tick (racy git): its status is not remembered
RACY_NS = 2_000_000_000
MIN_PARALLEL = 8  # fewer files than this to summarise are done here: starting workers costs more
T = TypeVar("T")


class FoundBroken(Exception):
    """A lazily read file turned out not to parse while a stage was using it (a class nobody
    had asked for until then): from now on it has no summary, as if it had been read whole
    at first, and the stage runs again (`Project.retrying`)."""


def internal_error(exc: Exception) -> str:
    return f"{INTERNAL}{type(exc).__name__}: {exc} (run with --debug for the traceback)"


def summarize_raw(path: Path, raw: bytes, debug: bool = False, lazy: bool = False) -> ModuleSummary | str:
    """The summary of a file's bytes, or why there is none. Top level, so workers can run it.
    `lazy`: top-level classes are parsed when first asked for (summary.py `summarize_lazily`)."""
    from .summary import summarize, summarize_lazily

    try:
        src = decode_source(path, raw)
        found = summarize_lazily(src.text, str(path)) if lazy and "\x00" not in src.text else None
        return found if found is not None else summarize(parse_source(src), src.text, str(path))
    except SourceError as exc:
        return str(exc)
    except RecursionError:
        return "code is nested too deeply to analyse"
    except Exception as exc:  # a bug on one odd file must not stop the run
        if debug:
            raise
        return internal_error(exc)


def _lazy(value: ModuleSummary | str) -> bool:
    from .summary import LazyClasses

    return not isinstance(value, str) and isinstance(value.classes, LazyClasses)


def cacheable(value: ModuleSummary | str) -> bool:
    """A summary, or a reason the file cannot be parsed; an internal error is not kept: the
    next version may not have the bug."""
    return not (isinstance(value, str) and value.startswith(INTERNAL))


def summarize_for_cache(path: Path, raw: bytes, debug: bool, encode: bool,
                        classes: re.Pattern[str] | None = None,
                        subclasses: bool = False) -> tuple[ModuleSummary | str, bytes | None]:
    """A worker's part: the summary, with the classes whose text `classes` finds already
    parsed (summary.py `classes_matching`: what the caller will ask for; None: all of them),
    and, when a cache will keep a whole summary, its entry's bytes, so that encoding happens
    in the worker too and the parent only writes them. A lazily read summary is kept by the
    parent once its run is done (`Project.save`); one found broken is sent as its reason."""
    from ..store.cache_codec import encode as encode_entry
    from .summary import LazyClasses

    value = summarize_raw(path, raw, debug, lazy=True)
    if not isinstance(value, str) and isinstance(value.classes, LazyClasses):
        value.classes_matching(classes, subclasses)
        return (value.classes.error if value.classes.error is not None else value), None
    if not encode or not cacheable(value):
        return value, None
    try:
        return value, encode_entry(value)
    except (ValueError, RecursionError):  # nested too deeply for JSON: recomputed next time
        return value, None


class Digests(MutableMapping[Path, str]):
    """The content key (`SummaryCache.key`) of each file a run read, hashed when first asked
    for: a run without a cache asks for few (the files its fixes edit), and hashing every
    file it read was a fortieth of a cold check's instructions. Until then the bytes are
    kept (the project keeps them anyway), and a file's bytes are compared with them, not
    hashed, to learn whether it changed."""

    def __init__(self) -> None:
        self._found: dict[Path, str | bytes] = {}  # the key, or the bytes not hashed yet

    def note(self, path: Path, raw: bytes) -> None:
        self._found[path] = raw

    def differs(self, path: Path, raw: bytes) -> bool:
        """Whether `raw` are not the bytes whose key is noted at `path` (which must be)."""
        found = self._found[path]
        return found != raw if isinstance(found, bytes) else found != SummaryCache.key(raw)

    def __getitem__(self, path: Path) -> str:
        found = self._found[path]
        if isinstance(found, bytes):
            found = self._found[path] = SummaryCache.key(found)
        return found

    def __setitem__(self, path: Path, key: str) -> None:
        self._found[path] = key

    def __delitem__(self, path: Path) -> None:
        del self._found[path]

    def __contains__(self, path: object) -> bool:
        return path in self._found

    def __iter__(self) -> Iterator[Path]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)


class Project:
    def __init__(self, cache: SummaryCache | None = None) -> None:
        self.cache = cache
        self.debug = False  # let an unexpected error propagate instead of recording it for the file
        self.max_file_size = DEFAULT_MAX_FILE_SIZE  # a larger file is refused unread (max-file-size)
        self._summaries: dict[Path, ModuleSummary | None] = {}
        self.errors: dict[Path, str] = {}
        # content key of every file this run read, hashed once when first asked for: the cache
        # key of its summary, a part of the run key, and what a later write is compared against
        self.digests = Digests()
        self._lookups: dict[tuple[Path, str], Path | None] = {}
        self._packaged: dict[Path, bool] = {}  # folder -> whether it is inside a package
        self._lazy: dict[Path, str] = {}  # lazily parsed summaries -> cache key, for `save`
        self._memo_key: str | None = None  # the status memo (use_status_memo): loaded, confirmed, read
        self._memo: dict[str, tuple[int, int, int, int, str]] = {}
        self._confirmed: dict[str, tuple[int, int, int, int, str]] = {}
        self._read_status: dict[str, tuple[int, int, int, int, str]] = {}
        self.parsed: list[Path] = []
        # analyses made over this project's files that live and end with it (the fix planner's
        # capture chain): kept here, not in a module-level table that would keep the project alive
        self.analyses: dict[str, Any] = {}
        # what raw/source/tree read, decoded or parsed, each once; a failure is kept as its reason
        self._raws: dict[Path, bytes | str] = {}
        self._sources: dict[Path, Source | str] = {}
        self._trees: dict[Path, ast.Module | str] = {}
        # the absolute Path of each path asked for, as given (a str or a Path): a run asks the
        # same few hundred files thousands of times, and making a Path each time was a tenth
        # of its analysis
        self._absolute: dict[str | Path, Path] = {}

    def absolute(self, path: str | Path) -> Path:
        """`Path(os.path.abspath(path))`, made once per path given."""
        found = self._absolute.get(path)
        if found is None:
            found = self._absolute[path] = Path(os.path.abspath(path))
        return found

    # -- file contents: the one place a scanned file is read ---------------
    def raw(self, path: str | Path) -> bytes:
        """A file's bytes, read once through the FIFO and size guard (max-file-size), its
        digest noted (`digests`); SourceError (the reason) when it cannot be read."""
        path = self.absolute(path)
        if path not in self._raws:
            try:
                raw, status = read_bytes_and_stat(path, self.max_file_size)
            except SourceError as exc:
                self._raws[path] = str(exc)
            else:
                self.note_read(path, raw)
                self._raws[path] = raw
                # remembered for the status memo, which only a cache holds
                if self.cache is not None and time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns) > RACY_NS:
                    self._read_status[str(path)] = (status.st_size, status.st_mtime_ns, status.st_ctime_ns,
                                                    status.st_ino, self.digests[path])
        return _value(self._raws[path])

    # -- the status memo: digests of files unchanged since a run read them ----------------
    def use_status_memo(self, paths: list[Path]) -> None:
        """Load what the cache remembers of these files' status (one entry for the set of
        files a run is given): `unchanged_since` then takes a digest without reading."""
        if self.cache is None:
            return
        key = self.cache.run_key([b"status", *sorted(os.path.abspath(p).encode() for p in paths)])
        found = self.cache.get(key)
        self._memo_key = key
        self._memo = found.entries if isinstance(found, StatusMemo) else {}

    def unchanged_since(self, path: Path) -> bool:
        """Whether the file still has the status it had when a run read it (size, mtime and
        ctime to the nanosecond, inode): then its digest is noted without reading it, as git
        and ruff trust a file's status. A write moves the ctime, which no program can set
        back; a status read within RACY_NS of a write was never remembered."""
        name = os.path.abspath(path)
        entry = self._memo.get(name)
        if entry is None:
            return False
        try:
            status = os.stat(name)
        except OSError:
            return False
        if not stat.S_ISREG(status.st_mode) or status.st_size > self.max_file_size or \
                entry[:4] != (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino):
            return False
        self.digests[Path(name)] = entry[4]
        self._confirmed[name] = entry
        return True

    def save_status_memo(self) -> None:
        """Remember the status of every file this run read or confirmed, when it changed."""
        if self.cache is None or self._memo_key is None:
            return
        entries = {**self._confirmed, **self._read_status}
        if entries != self._memo:
            self.cache.put(self._memo_key, StatusMemo(entries))
            self._memo = entries

    def source(self, path: str | Path) -> Source:
        """The file decoded (PEP 263 coding line, BOM, newlines kept), once; SourceError if it
        cannot be read or decoded."""
        path = self.absolute(path)
        if path not in self._sources:
            try:
                self._sources[path] = decode_source(path, self.raw(path))
            except SourceError as exc:
                self._sources[path] = str(exc)
        return _value(self._sources[path])

    def tree(self, path: str | Path) -> ast.Module:
        """The file's syntax tree, parsed once and shared by every rule that needs more than
        the summary: do not change it. SourceError (syntax error, too deeply nested) if none."""
        path = self.absolute(path)
        if path not in self._trees:
            try:
                self._trees[path] = parse_source(self.source(path))
            except SourceError as exc:
                self._trees[path] = str(exc)
        return _value(self._trees[path])

    def note_read(self, path: Path, raw: bytes) -> None:
        self.digests.note(self.absolute(path), raw)

    def changed_since_read(self, path: Path, raw: bytes) -> bool:
        """Whether `raw` differs from what this run read at `path` before (another process
        wrote it since): findings made from the old bytes must not be applied to the new."""
        path = self.absolute(path)
        return path in self.digests and self.digests.differs(path, raw)

    def current_source(self, path: Path) -> Source:
        """The file as it is now (not as this run first read it: `source`), decoded, read
        through the same guard as every other read (a FIFO is refused, max-file-size
        holds): what a fix edits. SourceError says why not."""
        return decode_source(path, read_bytes(path, self.max_file_size))

    def summary(self, path: str | Path, raw: bytes | None = None) -> ModuleSummary | None:
        """Summary of a .py file, or None (reason in `errors`) when it cannot be parsed.

        `raw` is the file's content when the caller has already read it.
        """
        path = self.absolute(path)
        if path not in self._summaries:
            self._summaries[path] = self._load(path, raw)
        return self._summaries[path]

    def _load(self, path: Path, raw: bytes | None, computed: ModuleSummary | str | None = None,
              entry: bytes | None = None):
        if raw is None:
            try:
                raw = self.raw(path)
            except SourceError as exc:
                self.errors[path] = str(exc)
                return None
        if raw is not self._raws.get(path):  # bytes this project read (`raw`) were noted then
            self.note_read(path, raw)
        key = self.digests[path] if self.cache else None
        value = self.cache.get(key) if self.cache is not None and key else None
        if value is None:
            value = computed if computed is not None else summarize_raw(path, raw, self.debug, lazy=True)
            self.parsed.append(path)
            if self.cache is not None and key and cacheable(value) and not _lazy(value):
                self.cache.put(key, value, entry)
        if isinstance(value, str):
            self.errors[path] = value
            return None
        from .summary import LazyClasses  # loaded with the summary or the cache entry that made `value`

        value.path = str(path)
        if isinstance(value.classes, LazyClasses):  # parsed from this project's copy of the text, when asked
            value.classes.bind(value, lambda: self.source(path).text, on_error=lambda why: self._broken(path, why))
            if key:
                self._lazy[path] = key
        return value

    def _broken(self, path: Path, why: str) -> None:
        self.errors[path] = why
        self._summaries[path] = None
        key = self._lazy.pop(path, None)
        if self.cache is not None and key:
            self.cache.put(key, why)  # the next run knows it at once
        raise FoundBroken(str(path))

    def retrying(self, stage: Callable[[], T]) -> T:
        """`stage()`, run again each time a lazily read file turns out not to parse: the run
        then sees exactly what reading that file whole would have shown from the start (no
        summary, the reason in `errors`). Each retry knows one more broken file: it ends."""
        while True:
            try:
                return stage()
            except FoundBroken:
                continue

    def save(self) -> None:
        """Keep the lazily parsed summaries with the classes this run parsed: the next run that
        needs them reads them. Called when a run's checks are done (a put per parse would
        encode a big module again for each of its classes)."""
        from .summary import LazyClasses

        for path, key in self._lazy.items():
            summary = self._summaries.get(path)
            classes = summary.classes if summary is not None else None
            if self.cache is not None and isinstance(classes, LazyClasses) and classes.changed \
                    and classes.error is None:
                self.cache.put(key, summary)
                classes.changed = False

    def prefetch(self, items: list[tuple[Path, bytes, re.Pattern[str] | None, bool]], jobs: int) -> None:
        """Summarise many files at once in `jobs` processes (cache misses only), largest
        first so that no worker is left with the biggest file at the end. Each item names
        the classes its caller will ask for (`summary.classes_matching`'s pattern and
        subclasses flag; None: every class): those are parsed in the worker too.

        `items` are files as the caller has just read and noted them (`note_read`)."""
        todo = []
        for path, raw, classes, subclasses in items:
            path = self.absolute(path)
            if path not in self.digests:
                self.note_read(path, raw)
            if path not in self._summaries and not (self.cache and self.cache.has(self.digests[path])):
                todo.append((path, raw, classes, subclasses))
        if jobs <= 1 or len(todo) < MIN_PARALLEL:
            return
        from concurrent.futures import ProcessPoolExecutor  # only here: its import costs every run

        # this process is one of the `jobs`: it summarises its share while the workers do
        # theirs, and receives only theirs (sending a summary costs about a third of making
        # it). Shares are balanced by size, largest first, as parse time follows it.
        shares: list[list[tuple[Path, bytes, re.Pattern[str] | None, bool]]] = \
            [[] for _ in range(min(jobs, len(todo)))]
        loads = [0] * len(shares)
        for item in sorted(todo, key=lambda item: -len(item[1])):
            least = loads.index(min(loads))
            shares[least].append(item)
            loads[least] += len(item[1])
        mine = shares[0]
        theirs = sorted((item for share in shares[1:] for item in share), key=lambda item: -len(item[1]))
        with ProcessPoolExecutor(max_workers=len(shares) - 1) as pool:
            futures = [pool.submit(summarize_for_cache, path, raw, self.debug, self.cache is not None,
                                   classes, subclasses)
                       for path, raw, classes, subclasses in theirs]
            for path, raw, classes, subclasses in mine:
                mod = self._summaries[path] = self._load(path, raw)
                if mod is not None:  # the classes the caller will ask for, as a worker does
                    mod.classes_matching(classes, subclasses)
            for future, (path, raw, _, _) in zip(futures, theirs, strict=True):
                value, data = future.result()
                self._summaries[path] = self._load(path, raw, value, data)

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
        # a module of a package (a folder at or above it has `__init__.py`) is imported by its
        # package name, and its folder is not on sys.path: `from transformers import X` in
        # sglang/srt/models/ is the installed transformers, never the sibling transformers.py;
        # a loose folder of scripts does see its siblings
        roots = [] if self._in_package(from_path.parent) else [from_path.parent]
        roots += [a.parent for a in from_path.parents if a.name == parts[0]]
        for root in roots:
            found = _locate(root, parts)
            if found is not None:
                return found
        return None

    def _in_package(self, folder: Path) -> bool:
        if folder not in self._packaged:
            self._packaged[folder] = (folder / "__init__.py").is_file() or (
                folder.parent != folder and self._in_package(folder.parent))
        return self._packaged[folder]

    def submodule(self, package: Path, name: str) -> Path | None:
        """`package.name` where package is a module location from resolve_module."""
        directory = package.parent if package.name == "__init__.py" else package
        if not directory.is_dir():
            return None
        return _locate(directory, [name])


def _value(kept: T | str) -> T:
    """What raw/source/tree kept: the value, or the reason it could not be had, raised."""
    if isinstance(kept, str):
        raise SourceError(kept)
    return kept


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
