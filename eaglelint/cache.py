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
ignored with a single warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from . import __version__
from .summary import ModuleSummary

# Entries are pickles written by this tool into the user's own cache directory.


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "eaglelint"


@cache
def format_tag() -> bytes:
    digest = hashlib.sha256(f"{__version__}|{sys.version_info[:2]}".encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):  # any code change starts afresh
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16].encode()


class SummaryCache:
    def __init__(self, directory: Path, warn: Callable[[str], None] = lambda message: None):
        self.directory = directory / f"v-{format_tag().decode()}"
        self._warn = warn
        self._warned = False
        self.hits = 0
        self.misses = 0

    def warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            self._warn(f"warning: cache not used here ({message}); results are not affected")

    @staticmethod
    def key(raw: bytes) -> str:
        return hashlib.sha256(format_tag() + b"\0" + raw).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.pickle"

    @staticmethod
    def run_key(parts: list[bytes]) -> str:
        digest = hashlib.sha256(format_tag() + b"\0run")
        for part in parts:
            digest.update(len(part).to_bytes(8, "little") + part)
        return "run-" + digest.hexdigest()

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def get(self, key: str):
        """A summary, the reason a file could not be parsed, a run's result; None when not cached."""
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                value = pickle.load(fh)
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception as exc:
            self.warn(f"unreadable cache entry {path.name}: {type(exc).__name__}")
            self.misses += 1
            return None
        if not isinstance(value, (ModuleSummary, str, tuple)):
            self.warn(f"unexpected cache entry {path.name}")
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: str, value) -> None:
        path = self._path(key)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            self.warn(f"cannot write to {self.directory}: {exc.strerror or exc}")
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
