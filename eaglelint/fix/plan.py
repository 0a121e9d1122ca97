"""Apply the fixes that findings carry, and write them without ever corrupting a file.

The check that made a finding planned its fix when it checked the file (checks/registry.py
`plan_fixes`): the finding carries its line edits, the imports its code needs, and the
digest of the bytes it was planned on. This stage only applies them: it takes the
fixes of the findings it is given (what is left after suppressions, select/ignore,
the baseline and the paths given), groups them by file and rule family, makes an edit
that two fixes both carry once, writes the import lines of exactly these fixes
(fix/imports.py `ImportWriter`), and merges the families' rewrites of a file, refusing
a later one whose edits clash with an earlier one's (EditableFile.merge). A file that
changed since it was checked is refused; nothing here plans a fix or compares a code.
A file is written only if the edited source parses and defines each new member,
through a temporary file and an atomic rename, and only if it has not changed since
it was read.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ..analysis.python.project import Project
from ..findings import Edit, Finding, ImportNeed
from .edits import CHANGED, EditableFile, FileFix, FixError, FixPlan, NotFixable
from .imports import ImportWriter
from .write_targets import write_refusal


def plan_fixes(findings: list[Finding], project: Project, roots: list[Path] | None = None) -> FixPlan:
    """Rewrites from the fixes the findings carry. With `roots`, only files inside them (after
    resolving symbolic links) are edited: a link must not lead a fix out of the tree."""
    from ..checks.registry import family_rank  # the merge order is the families' order

    plan = FixPlan()
    todo: dict[int, dict[str, list[Finding]]] = {}
    inside = [os.path.realpath(r) for r in roots] if roots is not None else None
    for f in findings:
        if f.fix is not None and inside is not None and not any(_within(os.path.realpath(f.path), r)
                                                                for r in inside):
            plan.left.append((f, "outside the given paths, or reached through a symbolic link out of them; "
                                 "not rewritten: pass it to `eaglelint fix`"))
        elif f.fix is not None:
            todo.setdefault(family_rank(f.code), {}).setdefault(os.path.abspath(f.path), []).append(f)
        else:
            plan.left.append((f, f.fix_refusal or f"{f.sentence} (no automatic fix for {f.code})"))
    planned: dict[str, FileFix] = {}  # one rewrite per file, all its families' fixes merged
    for _, by_file in sorted(todo.items()):
        for path, items in sorted(by_file.items()):
            try:
                file = EditableFile(Path(path), project)
                if any(f.fix is not None and f.fix.digest != file.digest for f in items):
                    raise NotFixable(CHANGED)
                fix = _rewrite(file, sorted(items, key=_rank), project)
            except NotFixable as exc:
                plan.left += [(f, str(exc)) for f in items]
                continue
            if path in planned:
                try:
                    fix = file.merge(planned[path], fix)
                except NotFixable as exc:  # the first family's rewrite stands; these wait for a second run
                    plan.left += [(f, str(exc)) for f in fix.findings]
                    continue
            planned[path] = fix
    plan.files = list(planned.values())
    return plan


def _rank(f: Finding) -> int:
    return f.fix.rank if f.fix is not None else 0


def _rewrite(file: EditableFile, items: list[Finding], project: Project) -> FileFix:
    """One rule family's fixes of one file as one rewrite: their edits (one that several carry,
    made once), in their planned order, and the import lines their needs come to."""
    fixes = [f.fix for f in items if f.fix is not None]
    edits = list(dict.fromkeys(e for fix in fixes for e in fix.edits))
    needs = [n for fix in fixes for n in fix.imports]
    imports: list[tuple[Edit, set[ImportNeed]]] = []
    added: list[str] = []
    if needs:  # the file's own import statements are read (parsed) only when there are some to write
        writer = ImportWriter(file.tree, file.lines, file.newline, project, file.path)
        imports, added = writer.edits(needs), writer.added
    out = file.finish(edits + [e for e, _ in imports], [w for fix in fixes for w in fix.writes], added,
                      [d for fix in fixes for d in fix.defines], items)
    out.edits_of = {f: [*f.fix.edits, *(e for e, served in imports if served & set(f.fix.imports))]
                    for f in items if f.fix is not None}
    return out


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def write_fix(fix: FileFix, named: list[Path] | None = None, allow_fetched: bool = False) -> None:
    """Atomically replace the file; leave it untouched (and no temp file) on any failure.
    With `named` (the paths the user gave), a file in an installed tree they did not name is
    refused, and one in a fetched release unless `allow_fetched` (fix/write_targets.py)."""
    refusal = write_refusal(fix.path, named, allow_fetched) if named is not None else None
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
