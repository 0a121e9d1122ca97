"""Turn fixable findings into file rewrites, and write them without ever corrupting a file.

The check that made a finding owns its fix: a rule family names its file planner
as `FIX` (checks/registry.py `fixer_of`), and nothing here compares a code. Each
planner gets one file opened for editing (edits.py: read through the project,
newline, BOM and encoding found once) and that file's findings; it returns the
rewrite, leaves a finding it cannot fix in `left` with the reason, or raises
NotFixable for the whole file. Planned lazily, when `fix` or SARIF asks: planning a
whole tree costs about a quarter of checking it (README, "The edit model").
A file is written only if the edited source parses, through a temporary file and an
atomic rename, and only if it has not changed since it was read.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ..analysis.project import Project
from ..findings import Finding
from .delegation import DEFAULT_STYLE
from .edits import EditableFile, FileFix, FixError, FixPlan, NotFixable, Planner
from .write_targets import installed_refusal


def plan_fixes(findings: list[Finding], project: Project, style: str = DEFAULT_STYLE,
               roots: list[Path] | None = None) -> FixPlan:
    """Rewrites for the fixable findings. With `roots`, only files inside them (after
    resolving symbolic links) are edited: a link must not lead a fix out of the tree."""
    from ..checks.registry import fixer_of, fixer_rank  # the checks own their fixes

    plan = FixPlan()
    todo: dict[Planner, dict[str, list[Finding]]] = {}
    inside = [os.path.realpath(r) for r in roots] if roots is not None else None
    for f in findings:
        fixer = fixer_of(f.code) if f.fixable else None
        if f.fixable and inside is not None and not any(_within(os.path.realpath(f.path), r) for r in inside):
            plan.left.append((f, "outside the given paths, or reached through a symbolic link out of them; "
                                 "not rewritten: pass it to `eaglelint fix`"))
        elif fixer is not None:
            todo.setdefault(fixer, {}).setdefault(os.path.abspath(f.path), []).append(f)
        else:
            plan.left.append((f, f.fix_refusal or f"{f.message} (no automatic fix for {f.code})"))
    planned: dict[str, FileFix] = {}  # one rewrite per file, all its families' fixes merged
    for fixer, by_file in sorted(todo.items(), key=lambda item: fixer_rank(item[0])):
        for path, items in sorted(by_file.items()):
            try:
                file = EditableFile(Path(path), project)
                fix = fixer(file, items, project, style, plan.left)
            except NotFixable as exc:
                plan.left += [(f, str(exc)) for f in items]
                continue
            if fix is not None and path in planned:
                try:
                    fix = file.merge(planned[path], fix)
                except NotFixable as exc:  # the first family's rewrite stands; these wait for a second run
                    plan.left += [(f, str(exc)) for f in fix.findings]
                    continue
            if fix is not None:
                planned[path] = fix
    plan.files = list(planned.values())
    return plan


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def write_fix(fix: FileFix, named: list[Path] | None = None) -> None:
    """Atomically replace the file; leave it untouched (and no temp file) on any failure.
    With `named` (the paths the user gave), a file in an installed tree they did not name is refused."""
    refusal = installed_refusal(fix.path, named) if named is not None else None
    if refusal:
        raise FixError(refusal)
    try:
        if fix.path.read_bytes() != fix.old:
            raise FixError("file changed while eaglelint was fixing it; run again")
        mode = stat.S_IMODE(fix.path.stat().st_mode)
    except OSError as exc:
        raise FixError(f"cannot read: {exc.strerror or exc}") from None
    try:  # a folder it may not write into is reported like any failed write
        fd, tmp = tempfile.mkstemp(dir=fix.path.parent, prefix=f".{fix.path.name}.", suffix=".eaglelint")
    except OSError as exc:
        raise FixError(f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(fix.new)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, fix.path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise FixError(f"cannot write: {exc.strerror or exc}") from None
        raise
