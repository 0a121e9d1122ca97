"""A baseline file: the findings a tree already had when eaglelint was switched on.

Why: a fork with existing gaps cannot turn the hook on if every commit is blocked by
findings in files nobody touched. Findings recorded in the baseline are not
reported; a new gap still is. A finding is identified as SARIF's fingerprint
identifies it (file, class, rule, member, wrapper attribute), never by line, so an
edit above a wrapper does not bring its baselined finding back. Paths are stored
relative to the baseline file's folder, so the file works from any directory.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

from ..config import ConfigError
from ..findings import Finding

VERSION = 1
Key = tuple[str, str, str, str, str]


def finding_key(f: Finding, root: Path) -> Key:
    absolute = Path(os.path.abspath(f.path))
    try:
        where = absolute.relative_to(root).as_posix()
    except ValueError:
        where = absolute.as_posix()
    return where, f.class_name, f.code, f.method or "", f.wrapper_attribute or ""


def _root(path: Path) -> Path:
    return Path(os.path.abspath(path)).parent


@cache
def load(path: Path) -> frozenset[Key]:
    """The keys a baseline file holds; ConfigError for one that is missing or malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["findings"]
        return frozenset((e["path"], e["class"], e["code"], e["method"] or "", e["wrapper_attribute"] or "")
                         for e in entries)
    except FileNotFoundError:
        raise ConfigError(f"{path}: baseline file not found (write one with --write-baseline)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the baseline: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not an eaglelint baseline ({type(exc).__name__}: {exc})") from None


def in_baseline(f: Finding, path: Path) -> bool:
    """Whether the baseline at `path` holds this finding (a file error is never baselined)."""
    return bool(f.class_name) and finding_key(f, _root(path)) in load(path)


def write(path: Path, findings: list[Finding]) -> int:
    """Record these findings (file errors left out: a file that cannot be read must be seen)."""
    root = _root(path)
    keys = sorted({finding_key(f, root) for f in findings if f.class_name})
    fields = ("path", "class", "code", "method", "wrapper_attribute")
    entries: list[dict[str, str | None]] = [dict(zip(fields, k, strict=True)) for k in keys]
    for entry in entries:
        entry["method"] = entry["method"] or None
        entry["wrapper_attribute"] = entry["wrapper_attribute"] or None
    text = json.dumps({"version": VERSION, "tool": "eaglelint", "findings": entries}, indent=2) + "\n"
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None
    load.cache_clear()
    return len(entries)
