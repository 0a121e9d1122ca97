"""Turn fixable findings into file rewrites, and write them without ever corrupting a file.

Which planner writes a finding's fix is data: its code's `fixer` in codes.toml
(delegation, marker, owner), never a code compared here. Each planner gets one
file opened for editing (edits.py: read through the project, newline, BOM and
encoding found once) and that file's findings; it returns the rewrite, leaves a
finding it cannot fix in `left` with the reason, or raises NotFixable for the whole
file. A file is written only if the edited source parses, through a temporary file
and an atomic rename, and only if it has not changed since it was read.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..analysis.class_body import bound_in_class, class_node
from ..analysis.project import Project
from ..analysis.summary import FunctionInfo, Param, free_names
from ..findings import Finding
from ..packs import load_codes, load_interfaces
from .delegation import DEFAULT_STYLE, Delegation, render
from .edits import Edit, EditableFile, FileFix, FixError, FixPlan, NotFixable, indentation, insert_index
from .imports import ImportPlan
from .marker import plan_marker_file
from .owner import plan_owner_file
from .write_targets import installed_refusal

Left = list[tuple[Finding, str]]
Planner = Callable[[EditableFile, list[Finding], Project, str, Left], "FileFix | None"]


def _method_order() -> dict[str, int]:
    order: dict[str, int] = {}
    for iface in sorted(load_interfaces().values(), key=lambda i: not i.default):  # default packs' order first
        for m in iface.methods:
            order.setdefault(m.name, len(order))
    return order


def plan_delegation_file(file: EditableFile, findings: list[Finding], project: Project, style: str,
                         left: Left) -> FileFix | None:
    """A delegating method per finding, at the end of its class, with the imports its signature needs."""
    tree, lines, newline = file.tree, file.lines, file.newline
    imports = ImportPlan(tree, lines, newline, project.summary(file.path), project, file.path)
    edits: list[Edit] = []
    added: list[tuple[str, str]] = []
    fixed: list[Finding] = []
    order = _method_order()
    by_class: dict[str, list[Finding]] = {}
    for f in findings:
        if f.method:
            by_class.setdefault(f.class_name, []).append(f)
        else:
            left.append((f, f"{f.message} (no automatic fix for {f.code})"))
    for qualname, items in by_class.items():
        node = class_node(tree, qualname)
        if node is None or node.body[0].lineno == node.lineno:
            left += [(f, "class body cannot be located for editing") for f in items]
            continue
        indent, step = indentation(lines, node)
        methods: list[str] = []
        seen = bound_in_class(node)
        for f in sorted(items, key=lambda f: order.get(f.method or "", 99)):
            method = f.method or ""
            if method in seen:
                left.append((f, f"{qualname} already binds {method} (line {seen[method]}); not overridden"))
                continue
            try:
                text = _render_one(f, project, imports, style, indent, step, qualname)
            except NotFixable as exc:
                left.append((f, str(exc)))
                continue
            seen[method] = node.lineno
            methods += ["", *text]
            added.append((qualname, method))
            fixed.append(f)
        if methods:
            edits.append(Edit(insert_index(lines, node, indent), insert_index(lines, node, indent), tuple(methods)))
    if not added:
        return None
    return file.finish(edits + imports.edits(), added, imports.added, defines=added, findings=fixed)


FIXERS: dict[str, Planner] = {  # in this order: a file gets one planner's fixes per run
    "delegation": plan_delegation_file,
    "marker": plan_marker_file,
    "owner": plan_owner_file,
}


def plan_fixes(findings: list[Finding], project: Project, style: str = DEFAULT_STYLE,
               roots: list[Path] | None = None) -> FixPlan:
    """Rewrites for the fixable findings. With `roots`, only files inside them (after
    resolving symbolic links) are edited: a link must not lead a fix out of the tree."""
    plan = FixPlan()
    todo: dict[str, dict[str, list[Finding]]] = {kind: {} for kind in FIXERS}
    inside = [os.path.realpath(r) for r in roots] if roots is not None else None
    codes = load_codes()
    for f in findings:
        if f.fixable and inside is not None and not any(_within(os.path.realpath(f.path), r) for r in inside):
            plan.left.append((f, "outside the given paths, or reached through a symbolic link out of them; "
                                 "not rewritten: pass it to `eaglelint fix`"))
        elif f.fixable and codes[f.code].fixer in FIXERS:
            todo[codes[f.code].fixer].setdefault(os.path.abspath(f.path), []).append(f)
        else:
            plan.left.append((f, f.fix_refusal or f"{f.message} (no automatic fix for {f.code})"))
    planned: set[str] = set()
    for kind, by_file in todo.items():
        for path, items in sorted(by_file.items()):
            if path in planned:
                plan.left += [(f, "the file also gets other fixes; run eaglelint fix again") for f in items]
                continue
            try:
                fix = FIXERS[kind](EditableFile(Path(path), project), items, project, style, plan.left)
            except NotFixable as exc:
                plan.left += [(f, str(exc)) for f in items]
                continue
            if fix is not None:
                plan.files.append(fix)
                planned.add(path)
    return plan


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _render_one(f: Finding, project: Project, imports: ImportPlan, style: str, indent: str, step: str,
                qualname: str) -> list[str]:
    provider_path = Path(os.path.abspath(f.wrapped_path))
    provider = project.summary(provider_path)
    method = provider.classes[f.provider_class].methods.get(f.method) if provider else None
    if method is None and _is_data_member(f.method):
        # an attribute (class-level or set in __init__): a read-only property forwards it
        method = FunctionInfo(f.method, 0, (Param("self", "pos"),), True, decorators=("property",))
    if method is None:
        raise NotFixable(f"the wrapped {f.method} is not a plain method (an attribute?); delegate it by hand")
    drop: set[str] = set()
    drop_return = False
    for p in method.params:
        if p.default is not None and not _names_ok(p.default, imports, provider_path, value=True):
            raise NotFixable(f"default of {p.name} uses a name that cannot be imported here")
        if p.annotation is not None and not _names_ok(p.annotation, imports, provider_path):
            drop.add(p.name)
    if method.return_annotation is not None and not _names_ok(method.return_annotation, imports, provider_path):
        drop_return = True
    returns_value = any(m.returns_value for i in load_interfaces().values() for m in i.methods if m.name == f.method)
    delegation = Delegation(qualname.split(".")[-1], f.wrapper_attribute or "language_model", method,
                            returns_value, style, frozenset(drop), drop_return, f.every_candidate)
    lines = render(delegation, indent, step)
    for p in method.params:
        if p.default:
            imports.require(_names(p.default, value=True), provider_path)
        if p.annotation and p.name not in drop:
            imports.require(_names(p.annotation), provider_path)
    if method.return_annotation and not drop_return:
        imports.require(_names(method.return_annotation), provider_path)
    return lines


def _is_data_member(name: str | None) -> bool:
    """A pack lists it as a property or attribute: the engine reads it, never calls it."""
    return any(m.name == name and m.kind != "method" for i in load_interfaces().values() for m in i.methods)


def _names(text: str, value: bool = False) -> set[str]:
    """Names an annotation (strings in it too: forward references) or a default value reads."""
    try:
        node = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if value else free_names(node)


def _names_ok(text: str, imports: ImportPlan, provider_path: Path, value: bool = False) -> bool:
    return all(hasattr(builtins, n) or imports.can_provide(n, provider_path) for n in _names(text, value))


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
