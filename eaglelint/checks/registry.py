"""The rule families, and the one place where an internal error becomes a finding.

Each family module is a `RuleFamily`: it declares `CODES`, `SUBJECTS`, `subjects(context)`
(the classes it judges) and `check(context, cls)` (their findings); `files(context)`, where
it finds its subjects in files other than the wrappers' (so they can be summarised in
parallel), with `SUBJECT_TEXT`; and `FIX`, the file planner (fix/edits.py `Planner`) that
plans the fix of its fixable codes. Those three are None in a family without them: mypy
checks every module of `FAMILIES` against the protocol. The registry runs every family
over its subjects, then (`plan_fixes`) each family's planner once per file over its
fixable findings there, so that every such finding leaves the check carrying its fix or
the reason it has none: the fix stage and SARIF only apply what findings carry, and never
compare codes. Adding a rule family is adding its module to `FAMILIES`.

Why isolation lives here: a linter that runs on strangers' pull requests meets code no
test foresaw (an inheritance chain thousands deep, a construct the resolver
mishandles). As ruff does for a file it cannot lint, the class is reported with the
reason (EGL999 at the class), the context is renewed, and every other class is still
checked; `--debug` lets the error propagate with its traceback. A class that failed
one family is not given to the later families that judge the same subjects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ..analysis.python.project import FoundBroken, Project, internal_error
from ..analysis.python.resolve import ClassEntity, Resolver
from ..findings import Finding, file_error
from ..fix.edits import EditableFile, NotFixable, Planner
from ..packs import load_codes
from . import aux_path, capture_chain, delegation, owner, vllm_marker
from .context import Context


class RuleFamily(Protocol):
    """What a rule family module declares (read-only: a module satisfies it by its names)."""

    @property
    def __name__(self) -> str: ...  # the module's: `eaglelint rule CODE` names it

    @property
    def CODES(self) -> tuple[str, ...]: ...

    @property
    def SUBJECTS(self) -> str: ...  # families that judge the same subjects share their failures

    @property
    def SUBJECT_TEXT(self) -> re.Pattern[str] | None: ...  # what a subject's text holds (None: any)

    @property
    def files(self) -> Callable[[Context], list[Path]] | None: ...  # the files it reads beyond the wrappers'

    @property
    def FIX(self) -> Planner | None: ...  # the planner of its fixable codes' fix

    def subjects(self, context: Context, /) -> Iterable[ClassEntity]: ...

    def check(self, context: Context, cls: ClassEntity, /) -> list[Finding]: ...


FAMILIES: tuple[RuleFamily, ...] = (delegation, aux_path, vllm_marker, owner, capture_chain)


def subject_files(context: Context) -> dict[Path, re.Pattern[str] | None]:
    """The given files the families will read to find their subjects (a family that reads
    more than the wrappers declares `files(context)`), each with the text a class must have
    to be a subject (the family's `SUBJECT_TEXT`; None: any class): the driver summarises
    them up front, in parallel with the rest, instead of one by one as each family comes
    to them."""
    out: dict[Path, re.Pattern[str] | None] = {}
    for family in FAMILIES:
        text = family.SUBJECT_TEXT
        for path in family.files(context) if family.files is not None else ():
            if path in out and out[path] != text:  # both families' classes: either text
                seen = out[path]
                out[path] = None if seen is None or text is None else re.compile(f"{seen.pattern}|{text.pattern}")
            else:
                out[path] = text
    return out


def run_checks(context: Context) -> list[Finding]:
    out: list[Finding] = []
    failed: set[tuple[str, ClassEntity]] = set()
    for family in FAMILIES:
        kind = family.SUBJECTS  # families that judge the same subjects share their failures
        for cls in family.subjects(context):
            if (kind, cls) in failed:
                continue
            try:
                out += family.check(context, cls)
            except FoundBroken:
                raise  # not this class's fault: the whole stage runs again (Project.retrying)
            except Exception as exc:
                out.append(class_failure(context.project, cls, exc))
                failed.add((kind, cls))
                context.renew()
    return out


def fixer_of(code: str) -> Planner | None:
    """The fix of a code codes.toml calls fixable: the `FIX` of the family that declares it."""
    if not load_codes()[code].fixable:
        return None
    return next((f.FIX for f in FAMILIES if code in f.CODES), None)


def module_of(code: str) -> str | None:
    """The module of the family that declares `code` (None for a code no family declares)."""
    return next((f.__name__ for f in FAMILIES if code in f.CODES), None)


def family_rank(code: str) -> int:
    """The order of the family that declares `code`: the fix stage merges a file's rewrites in
    it, and refuses a later family's rewrite that clashes with an earlier one's."""
    return next((i for i, f in enumerate(FAMILIES) if code in f.CODES), len(FAMILIES))


def plan_fixes(findings: list[Finding], project: Project, style: str) -> list[Finding]:
    """The findings, in order, each fixable one with its fix or the reason it has none.

    Each family's planner is called once per file with its fixable findings there, on the
    file as this run read it; a planner that refuses the whole file (NotFixable) gives
    every one of them that reason."""
    todo: dict[tuple[int, str], list[int]] = {}
    for i, f in enumerate(findings):
        if f.fixable and f.fix is None:
            todo.setdefault((family_rank(f.code), os.path.abspath(f.path)), []).append(i)
    out = list(findings)
    for (rank, path), indexes in todo.items():
        planner = FAMILIES[rank].FIX
        assert planner is not None, "a family with fixable codes declares FIX"
        items = [findings[i] for i in indexes]
        try:
            planned = planner(EditableFile.as_checked(Path(path), project), items, project, style)
        except NotFixable as exc:
            planned = [replace(f, fix_refusal=str(exc)) for f in items]
        except Exception as exc:  # as for a check: the findings stand, without a fix
            if project.debug:
                raise
            planned = [replace(f, fix_refusal=f"no fix planned: {internal_error(exc)}") for f in items]
        # a planner returns the findings it was given (in its own order): each to its place
        slot = {id(f): i for f, i in zip(items, indexes, strict=True)}
        for f, new in _pairs(items, planned):
            out[slot[id(f)]] = new
    return out


def _pairs(items: list[Finding], planned: list[Finding]) -> list[tuple[Finding, Finding]]:
    """Each given finding with the planned one made from it (equal but for fix and fix_refusal)."""
    left = list(items)
    pairs = []
    for new in planned:
        bare = replace(new, fix=None, fix_refusal=None)
        i = next(i for i, f in enumerate(left) if f == bare)
        pairs.append((left.pop(i), new))
    assert not left, "a fix planner lost a finding"
    return pairs


def class_failure(project: Project, cls: ClassEntity, exc: Exception) -> Finding:
    if project.debug:
        raise exc
    deep = "bases, names or expressions nested too deeply to analyse"
    why = f"{cls.qualname}: {deep if isinstance(exc, RecursionError) else internal_error(exc)}"
    info = Resolver(project).info(cls)  # its module was summarised: the class was found there
    return replace(file_error(Path(cls.path), why), line=info.line, column=info.column, class_name=info.name)
