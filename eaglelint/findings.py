"""A finding and a run's result: plain data that every stage after the checks reads.

Why its own module: the checks make findings, and the cache, output, suppressions,
baseline and fix stages read them; none of those should depend on the checks to do so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .packs import load_codes

INTERNAL_ERROR = "EGL999"  # a file or class eaglelint could not check; the run goes on


@dataclass(frozen=True)
class Finding:
    """One gap. `path` and `wrapped_path` are absolute: a finding (and the cache that keeps
    it) does not depend on the directory eaglelint ran in; the output stage shows them
    with `display_path`."""

    path: str
    line: int
    column: int
    code: str
    message: str
    class_name: str = ""
    wrapped_class: str | None = None
    method: str | None = None
    wrapped_path: str | None = None
    wrapped_line: int | None = None
    provider_class: str | None = None
    interface: str | None = None
    wrapper_attribute: str | None = None
    entry_class: bool = False
    subclasses: tuple[str, ...] = ()
    included_because: str | None = None  # set for a file checked only because it depends on a changed one
    every_candidate: bool = True  # every class the attribute may hold provides `method`
    fix_refusal: str | None = None  # why `eaglelint fix` cannot write this one, though its code is fixable

    @property
    def severity(self) -> str:
        return load_codes()[self.code].severity

    @property
    def fixable(self) -> bool:
        """`eaglelint fix` writes the change: the code has a fix and this shape does not refuse it."""
        return load_codes()[self.code].fixable and self.fix_refusal is None


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0


def display_path(path: str | Path) -> str:
    """Relative to the working directory when inside it: what editors and CI link.
    Called by the output stages only (report, junit, fix messages), when they write."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def file_error(path: Path, reason: str) -> Finding:
    return Finding(os.path.abspath(path), 1, 1, INTERNAL_ERROR, f"cannot check {Path(path).name}: {reason}")
