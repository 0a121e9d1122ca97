"""A finding and a run's result: plain data that every stage after the checks reads.

Why its own module: the checks make findings, and the cache, output, suppressions,
baseline and fix stages read them; none of those should depend on the checks to do so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .packs import load_codes

INTERNAL_ERROR = "EGL999"  # a file or class eaglelint could not check; the run goes on
WRITTEN_KINDS = ("method", "base", "edit")  # what a fix writes into a class (`Written`)


@dataclass(frozen=True)
class Edit:
    """Replace the 0-based lines [start, end) of the file as read with `lines` (no line endings);
    an insertion when start == end. The one edit model: every fix, `--add-noqa` and SARIF's
    `fixes[]` speak of it (fix/edits.py applies it)."""

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class ImportNeed:
    """A name the fix's code reads that the file must import: `from module import name [as asname]`,
    or `import module [as asname]` when `name` is None. `module` is spelled as it will be written
    (a relative one keeps its dots)."""

    module: str
    name: str | None = None
    asname: str | None = None

    @property
    def bound(self) -> str:
        """The name the import binds in the file."""
        return self.asname or self.name or self.module.split(".")[0]


class Written(NamedTuple):
    """One thing a fix writes into a class: a member added (`kind` "method", `name` the
    member), a base class added ("base", `name` the base) or a method of its own changed
    ("edit", `name` that method: the owner's `__init__` and `forward` for the capture hook)."""

    kind: str
    class_name: str
    name: str

    def action(self) -> str:
        """What it does, in words: `add C.m`, `add B to the bases of C`, `edit C.forward`."""
        if self.kind == "base":
            return f"add {self.name} to the bases of {self.class_name}"
        return f"{'edit' if self.kind == 'edit' else 'add'} {self.class_name}.{self.name}"


@dataclass(frozen=True)
class Fix:
    """What fixes one finding, planned when the file was checked: its own line edits (the member
    it adds, and any change of its class that member needs), the imports its code needs, what it
    writes (`writes`: what `fix` reports it did), what the result must define, and the digest of
    the bytes it was planned on.

    Why imports are needs, not line edits: the imports of several findings merge into one
    line (`from typing import List, Optional`), so their line edit depends on which findings
    are fixed together; the fix stage writes it for exactly the findings it applies
    (fix/imports.py), so a finding fixed alone imports only what it needs. `rank` orders a
    file's fixes of one rule family: their insertions at one place land in that order."""

    edits: tuple[Edit, ...]
    writes: tuple[Written, ...]
    digest: str
    imports: tuple[ImportNeed, ...] = ()
    defines: tuple[tuple[str, str], ...] = ()  # (class, method) the edited file must define
    rank: int = 0


class FixIntent:
    """What a check decided fixes a finding, for the fix planner to render: the kinds are
    fix/intent.py's. A base of its own here, so that findings stay plain data that names no
    analysis type."""

    __slots__ = ()


@dataclass(frozen=True)
class Finding:
    """One gap. `path` and `wrapped_path` are absolute: a finding (and the cache that keeps
    it) does not depend on the directory eaglelint ran in; the output stage shows them
    with `display_path`.

    Its text, as ruff splits a diagnostic's `message()` from its `fix_title()`: `message` is
    one short line (what, and where: the class and the member), `help` the lines under it
    (why, the candidates, the subclasses that inherit the gap), `fix_title` what `eaglelint
    fix` writes for it, and `fix_refusal` why it writes nothing. Each code's family builds
    them in one place; the reports print `notes` under the message."""

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
    fix_refusal: str | None = None  # why `eaglelint fix` writes nothing for it (or why its code has no fix here)
    fix: Fix | None = None  # what `eaglelint fix` writes for it, planned by its check (checks/run.py)
    help: tuple[str, ...] = ()  # the lines under the message: why, the candidates, who inherits it
    fix_title: str | None = None  # what `eaglelint fix` writes, for a code that has a fix
    # what fixes it, as its check decided: what the fix planner renders (fix/intent.py). Not part of
    # the finding's identity, and not cached: a cached finding carries the fix planned from it
    intent: FixIntent | None = field(default=None, compare=False, repr=False)

    @property
    def notes(self) -> tuple[str, ...]:
        """The help lines a report prints under the message: `help`, then what `eaglelint fix`
        writes, or why it writes nothing."""
        if self.fix_refusal is not None:
            return (*self.help, f"no automatic fix: {self.fix_refusal}")
        if self.fix_title is not None and self.fixable:
            return (*self.help, f"eaglelint fix: {self.fix_title}")
        return self.help

    @property
    def sentence(self) -> str:
        """The message and its help as one line, `message: help; help`: where one cell says it
        (a `support` row)."""
        return f"{self.message}: {'; '.join(self.help)}" if self.help else self.message

    @property
    def severity(self) -> str:
        return load_codes()[self.code].severity

    @property
    def fixable(self) -> bool:
        """`eaglelint fix` writes the change: the code has a fix and neither the check nor the
        fix's planner refused this one. The check plans every such finding's fix, so for a
        finding a check made this is exactly `fix is not None` (ruff's `[*]`)."""
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
