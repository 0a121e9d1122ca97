"""Turn fixable findings into file edits, and write them without ever corrupting a file.

Edits are line-based: new methods are inserted at the end of the class body and
import lines are merged or added; every other byte of the file is kept (encoding,
BOM, line endings, indentation style). A file is written only if the edited source
parses, through a temporary file and an atomic rename, and only if it has not
changed since it was read.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ..analysis.class_body import bound_in_class
from ..analysis.prefilter import DEFAULT_HELD_ATTR
from ..analysis.project import Project
from ..analysis.sources import SourceError, parse_source, read_source, split_lines
from ..analysis.summary import FunctionInfo, Param, free_names
from ..checks.marker_scan import CODE as MARKER_CODE
from ..checks.owner import CODE as OWNER_CODE
from ..findings import Finding
from ..packs import load_interfaces
from .delegation import DEFAULT_STYLE, Delegation, NotFixable, render
from .edits import FileFix, FixError, FixPlan, apply_edits, find_class, indentation, insert_index
from .imports import ImportPlan
from .marker import plan_marker_fixes
from .owner import plan_owner_fixes
from .write_targets import installed_refusal


def _method_order() -> dict[str, int]:
    order: dict[str, int] = {}
    for iface in sorted(load_interfaces().values(), key=lambda i: not i.default):  # default packs' order first
        for m in iface.methods:
            order.setdefault(m.name, len(order))
    return order


def plan_fixes(findings: list[Finding], project: Project, style: str = DEFAULT_STYLE,
               roots: list[Path] | None = None) -> FixPlan:
    """Edits for the fixable findings. With `roots`, only files inside them (after
    resolving symbolic links) are edited: a link must not lead a fix out of the tree."""
    plan = FixPlan()
    by_file: dict[str, list[Finding]] = {}
    markers: list[Finding] = []
    owners: list[Finding] = []
    inside = [os.path.realpath(r) for r in roots] if roots is not None else None
    for f in findings:
        if f.fixable and inside is not None and not any(_within(os.path.realpath(f.path), r) for r in inside):
            plan.left.append((f, "outside the given paths, or reached through a symbolic link out of them; "
                                 "not rewritten: pass it to `eaglelint fix`"))
        elif f.fixable and f.code == MARKER_CODE:
            markers.append(f)
        elif f.fixable and f.code == OWNER_CODE:
            owners.append(f)
        elif f.fixable and f.method:
            by_file.setdefault(os.path.abspath(f.path), []).append(f)
        else:
            plan.left.append((f, f.fix_refusal or f"{f.message} (no automatic fix for {f.code})"))
    for path, items in sorted(by_file.items()):
        try:
            fix = _plan_file(Path(path), items, project, style, plan.left)
        except SourceError as exc:
            plan.left += [(f, str(exc)) for f in items]
            continue
        except RecursionError:
            plan.left += [(f, "nested too deeply to edit safely; nothing written") for f in items]
            continue
        if fix is not None:
            plan.files.append(fix)
    if markers:
        plan_marker_fixes(markers, project, plan)
    if owners:
        plan_owner_fixes(owners, project, plan)
    return plan


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _plan_file(path: Path, findings: list[Finding], project: Project, style: str, left) -> FileFix | None:
    if path.is_symlink():
        left += [(f, "is a symbolic link; eaglelint does not rewrite through links") for f in findings]
        return None
    src = read_source(path)
    if project.changed_since_read(path, src.raw):
        left += [(f, "file changed since it was checked (another fix running?); run again") for f in findings]
        return None
    tree = parse_source(src)
    lines = split_lines(src.text)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\r" if lines and lines[0].endswith("\r") else "\n"
    wrapper_mod = project.summary(path)
    imports = ImportPlan(tree, lines, newline, wrapper_mod, project, path)
    inserts: list[tuple[int, list[str]]] = []
    added: list[tuple[str, str]] = []
    order = _method_order()
    by_class: dict[str, list[Finding]] = {}
    for f in findings:
        by_class.setdefault(f.class_name, []).append(f)
    for qualname, items in by_class.items():
        node = find_class(tree, qualname)
        if node is None or node.body[0].lineno == node.lineno:
            left += [(f, "class body cannot be located for editing") for f in items]
            continue
        indent, step = indentation(lines, node)
        methods: list[str] = []
        seen = bound_in_class(node)
        for f in sorted(items, key=lambda f: order.get(f.method, 99)):
            if f.method in seen:
                left.append((f, f"{qualname} already binds {f.method} (line {seen[f.method]}); not overridden"))
                continue
            try:
                text = _render_one(f, project, imports, style, indent, step, qualname)
            except NotFixable as exc:
                left.append((f, str(exc)))
                continue
            seen[f.method] = node.lineno
            methods += [""] + text
            added.append((qualname, f.method))
        if methods:
            inserts.append((insert_index(lines, node, indent), [m + newline if m else newline for m in methods]))
    if not added:
        return None
    edited = apply_edits(lines, inserts + imports.edits(), newline)
    try:
        misplaced = _misplaced(ast.parse(edited), added)
    except SyntaxError as exc:
        left += [(f, f"edited source would not parse ({exc.msg}); nothing written") for f in findings]
        return None
    if misplaced:
        left += [(f, f"new {misplaced} would not land in its class; nothing written") for f in findings]
        return None
    bom = b"\xef\xbb\xbf" if src.raw.startswith(b"\xef\xbb\xbf") and not src.encoding.endswith("-sig") else b""
    return FileFix(path, src.raw, bom + edited.encode(src.encoding), src.encoding, added, imports.added)


def _misplaced(tree: ast.Module, added: list[tuple[str, str]]) -> str | None:
    """The first added method that the edited file does not define in its class, if any."""
    for qualname, method in added:
        node = find_class(tree, qualname)
        if node is None or not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method
                                   for n in node.body):
            return f"{qualname}.{method}"
    return None


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
    delegation = Delegation(qualname.split(".")[-1], f.wrapper_attribute or DEFAULT_HELD_ATTR, method,
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
