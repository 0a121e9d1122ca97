"""The rule families, and the one place where an internal error becomes a finding.

Each family module declares `CODES`, `subjects(context)` (the classes it judges) and
`check(context, cls)` (their findings); a family that finds its subjects in files other
than the wrappers' also declares `files(context)`, so they can be summarised in parallel;
one with fixable codes declares `FIX`, the file planner (fix/edits.py `Planner`) that
writes their fix, which the fix stage asks for here (`fixer_of`) rather than comparing
codes. The registry runs every family over its subjects; adding a rule family is adding
its module to `FAMILIES`.

Why isolation lives here: a linter that runs on strangers' pull requests meets code no
test foresaw (an inheritance chain thousands deep, a construct the resolver
mishandles). As ruff does for a file it cannot lint, the class is reported with the
reason (EGL999 at the class), the context is renewed, and every other class is still
checked; `--debug` lets the error propagate with its traceback. A class that failed
one family is not given to the later families that judge the same subjects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from ..analysis.project import FoundBroken, Project, internal_error
from ..analysis.resolve import ClassEntity, Resolver
from ..findings import Finding, file_error
from ..fix.edits import Planner
from ..packs import load_codes
from . import aux, marker_scan, members, owner
from .context import Context

FAMILIES: tuple[ModuleType, ...] = (members, aux, marker_scan, owner)


def subject_files(context: Context) -> list[Path]:
    """The given files the families will read to find their subjects (a family that reads
    more than the wrappers declares `files(context)`): the driver summarises them up front,
    in parallel with the rest, instead of one by one as each family comes to them."""
    out: dict[Path, None] = {}
    for family in FAMILIES:
        files = getattr(family, "files", None)
        out.update(dict.fromkeys(files(context) if files else ()))
    return list(out)


def run_checks(context: Context) -> list[Finding]:
    out: list[Finding] = []
    failed: set[tuple[str, ClassEntity]] = set()
    for family in FAMILIES:
        subjects: Iterable[ClassEntity] = family.subjects(context)
        kind: str = family.SUBJECTS  # families that judge the same subjects share their failures
        for cls in subjects:
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
    return next((getattr(f, "FIX", None) for f in FAMILIES if code in f.CODES), None)


def fixer_rank(fixer: Planner) -> int:
    """The families' order: a file's rewrites are merged in it, a clashing later one refused."""
    return next(i for i, f in enumerate(FAMILIES) if getattr(f, "FIX", None) is fixer)


def class_failure(project: Project, cls: ClassEntity, exc: Exception) -> Finding:
    if project.debug:
        raise exc
    deep = "bases, names or expressions nested too deeply to analyse"
    why = f"{cls.qualname}: {deep if isinstance(exc, RecursionError) else internal_error(exc)}"
    info = Resolver(project).info(cls)  # its module was summarised: the class was found there
    return replace(file_error(Path(cls.path), why), line=info.line, column=info.column, class_name=info.name)
