"""A persistent cache of per-module summaries and of whole-run results, keyed by content.

Why content, not mtime: a finding in kimi_k25.py depends on deepseek_v2.py, so a
per-file "unchanged since last run" flag (ruff's mtime cache) cannot tell when a
cross-module result is stale. Caching the *summaries* by the hash of each file's
bytes avoids that question: findings are always recomputed from summaries, and a
summary is reused only for byte-identical content. The key also covers the
eaglelint version, the Python version (ast differs) and the source of the modules
that shape a summary, so a new eaglelint never reads an old layout. No config
option changes a summary, so none is in the key.

A whole run's findings are cached too, keyed by the options, the working folder
and the content of every scanned file, and stored with the content hash of every
other file the resolution read (deepseek_v2.py when only kimi_k25.py was given):
the entry is used only if all of those are unchanged. A file that did not exist
outside the scanned paths and appears later is the one change this cannot see.

The cache is an optimisation only: unreadable, corrupt or unwritable entries are
ignored with a single warning. Entries are plain JSON data (cache_codec.py), never
pickle: CI restores cache folders from storage a pull request can write, and loading
an entry must not be able to run code. The cache stays bounded: a new eaglelint (a new
`v-<tag>` folder) removes the folders of older ones, and a run that wrote entries
evicts the oldest written once the folder exceeds its size bound.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

from ... import __version__
from .cache_codec import MAX_ENTRY_BYTES, EntryError, decode, encode

DEFAULT_MAX_SIZE = 256 * 1024 * 1024
VERSION_FOLDER = re.compile(r"v-[0-9a-f]{16}")  # the only folders pruning or `clean` ever removes
CACHEDIR_TAG = "CACHEDIR.TAG"  # https://bford.info/cachedir/: backup tools skip the folder
TAG_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
            "# This file is a cache directory tag created by eaglelint.\n")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "eaglelint"


@cache
def format_tag() -> bytes:
    digest = hashlib.sha256(f"{__version__}|{sys.version_info[:2]}".encode())
    for path in sorted(Path(__file__).parents[2].rglob("*.py")):  # any code change starts afresh
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16].encode()


class SummaryCache:
    def __init__(self, directory: Path, warn: Callable[[str], None] = lambda message: None,
                 max_size: int = DEFAULT_MAX_SIZE):
        self.root = directory
        self.directory = directory / f"v-{format_tag().decode()}"
        self.max_size = max_size
        self._warn = warn
        self._warned = False
        self._ready = False
        self.written = 0
        self.hits = 0
        self.misses = 0

    def warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            self._warn(f"warning: cache not used here ({message}); results are not affected")

    @staticmethod
    def key(raw: bytes) -> str:
        digest = hashlib.sha256(format_tag() + b"\0")
        digest.update(raw)  # not `tag + raw`: that copies every file's bytes once more
        return digest.hexdigest()

    def entry_path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    @staticmethod
    def run_key(parts: list[bytes]) -> str:
        digest = hashlib.sha256(format_tag() + b"\0run")
        for part in parts:
            digest.update(len(part).to_bytes(8, "little") + part)
        return "run-" + digest.hexdigest()

    @staticmethod
    def derived_key(kind: str, digest: str) -> str:
        """The key of what `kind` finds in the file whose bytes have key `digest` (found
        only from those bytes, so kept by their digest as the summary is)."""
        return f"{kind}-" + hashlib.sha256(f"{kind}\0{digest}".encode()).hexdigest()

    def has(self, key: str) -> bool:
        try:  # Path.is_file lets PermissionError through (a cache folder of another user)
            return self.entry_path(key).is_file()
        except OSError:
            return False

    def get(self, key: str):
        """A summary, the reason a file could not be parsed, a run's result; None when not cached."""
        path = self.entry_path(key)
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_ENTRY_BYTES + 1)
            if len(data) > MAX_ENTRY_BYTES:
                raise EntryError("larger than any entry eaglelint writes")
            value = decode(data)
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, EntryError) as exc:
            self.warn(f"unreadable cache entry {path.name}: {exc}")
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, value, data: bytes | None = None) -> None:
        """Keep `value` under `key`; `data` is its entry when a worker has encoded it already."""
        if data is None:
            try:
                data = encode(value)
            except (ValueError, RecursionError):  # nested too deeply for JSON: recomputed next time
                return
        if len(data) > min(MAX_ENTRY_BYTES, self.max_size):
            return
        import tempfile  # writing only: a warm run that reads its entries does without

        path = self.entry_path(key)
        tmp = None
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
            tmp = None
            self.written += len(data)
        except OSError as exc:
            self.warn(f"cannot write to {self.directory}: {exc.strerror or exc}")
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def _prepare(self) -> None:
        """Before the first write: a new version folder replaces those of other versions."""
        if self._ready:
            return
        self._ready = True
        if self.directory.is_dir():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        tag = self.root / CACHEDIR_TAG
        if not tag.exists():
            tag.write_text(TAG_TEXT)
        import shutil

        for folder in version_folders(self.root):
            if folder != self.directory:
                shutil.rmtree(folder, ignore_errors=True)

    def trim(self) -> None:
        """After a run that wrote entries: if the folder exceeds `max_size`, remove the oldest
        written entries down to three quarters of it (a hit does not refresh an entry, but a
        removed entry still in use is simply written again)."""
        if not self.written:
            return
        entries = []
        with contextlib.suppress(OSError):
            for sub in os.scandir(self.directory):
                if sub.is_dir(follow_symlinks=False):
                    for entry in os.scandir(sub.path):
                        with contextlib.suppress(OSError):
                            info = entry.stat(follow_symlinks=False)
                            entries.append((info.st_mtime, info.st_size, entry.path))
        total = sum(size for _, size, _ in entries)
        if total <= self.max_size:
            return
        for _, size, path in sorted(entries):
            with contextlib.suppress(OSError):
                os.unlink(path)
            total -= size
            if total <= self.max_size * 3 // 4:
                break


def version_folders(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if VERSION_FOLDER.fullmatch(p.name) and not p.is_symlink())
    except OSError:
        return []


def clean(root: Path) -> list[Path]:
    """Remove every eaglelint cache folder under `root`: what was removed. The cache tag goes
    (and `root` with it) only when nothing else is left in `root`: the tag tells backup tools
    that the whole folder is a cache, which stays true while anything else is kept there.

    Only `v-<tag>` folders and the cache tag are touched, so `--cache-dir` pointing at a
    folder that holds other things never loses them."""
    import shutil

    removed = []
    for folder in version_folders(root):
        shutil.rmtree(folder)
        removed.append(folder)
    remove_if_only_tagged(root)
    return removed


def remove_if_only_tagged(root: Path) -> bool:
    """Remove `root` when it holds nothing but the cache tag (or nothing): whether it did."""
    try:
        if any(entry.name != CACHEDIR_TAG for entry in os.scandir(root)):
            return False
    except OSError:
        return False
    with contextlib.suppress(FileNotFoundError):
        (root / CACHEDIR_TAG).unlink()
    with contextlib.suppress(OSError):
        root.rmdir()
        return True
    return False
