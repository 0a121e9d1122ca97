"""The fix of EGL001-003: a delegating method per finding at the end of its class, with the
imports its copied signature needs, for one file.

Why apart from the renderer (delegation.py): the renderer writes one method from a
signature and is loaded by every run (config reads its styles); this reads the file,
places the methods and says which imports each needs, once per file when the file is
checked. The members check names it as its fix (checks/delegation.py `FIX`).
"""

from __future__ import annotations

import ast
import builtins
import os
import re
from dataclasses import replace
from pathlib import Path

from ..analysis.python.project import Project
from ..analysis.python.summary import FunctionInfo, Param, free_names
from ..analysis.syntax.class_body import bound_in_class, class_node
from ..findings import Finding, Fix, ImportNeed, Written
from ..packs import load_interfaces
from .delegation import Delegation, render
from .edits import Edit, EditableFile, NotFixable, after_body, indentation, indentation_at, insert_index
from .imports import ImportPlan
from .intent import CaptureAsOwner, Delegate


def _method_order() -> dict[str, int]:
    order: dict[str, int] = {}
    for iface in sorted(load_interfaces().values(), key=lambda i: not i.default):  # default packs' order first
        for m in iface.methods:
            order.setdefault(m.name, len(order))
    return order


def plan_delegation_file(file: EditableFile, findings: list[Finding], project: Project,
                         style: str) -> list[Finding]:
    """Each finding with its fix: a delegating method at the end of its class (or the capture
    member written as an owner writes it), as its check decided (`Finding.intent`), and the
    imports its signature needs; or with the reason there is none."""
    imports = ImportPlan(project.summary(file.path), project, file.path)
    order = _method_order()
    out: list[Finding] = []
    by_class: dict[str, list[tuple[Finding, Delegate | CaptureAsOwner]]] = {}
    for f in findings:
        if isinstance(f.intent, (Delegate, CaptureAsOwner)):
            by_class.setdefault(f.class_name, []).append((f, f.intent))
        else:
            out.append(replace(f, fix_refusal=f"{f.message} (no automatic fix for {f.code})"))
    for qualname, items in by_class.items():
        place = _place(file, project, qualname, [intent.member for _, intent in items])
        if place is None:
            out += [replace(f, fix_refusal="class body cannot be located for editing") for f, _ in items]
            continue
        indent, step, at, seen, class_line = place
        for f, intent in sorted(items, key=lambda item: order.get(item[1].member, 99)):
            method = intent.member
            if method in seen:
                out.append(replace(f, fix_refusal=f"{qualname} already binds {method} (line {seen[method]}); "
                                                  "not overridden"))
                continue
            try:
                text, needs = _render_one(intent, imports, style, indent, step, qualname)
            except NotFixable as exc:
                out.append(replace(f, fix_refusal=str(exc)))
                continue
            seen[method] = class_line
            fix = Fix((Edit(at, at, ("", *text)),), (Written("method", qualname, method),), file.digest, tuple(needs),
                      defines=((qualname, method),), rank=len(out))
            out.append(replace(f, fix=fix))
    return out


def _place(file: EditableFile, project: Project, qualname: str,
           methods: list[str]) -> tuple[str, str, int, dict[str, int], int] | None:
    """Where the class's new methods go: (indent, step, 0-based insertion index, the names
    among `methods` the class already binds -> line, the class's line); None if the class
    body cannot be located."""
    quick = place_from_summary(file, project, qualname, methods)
    if quick is not None:
        return quick
    node = class_node(file.tree, qualname)
    if node is None or node.body[0].lineno == node.lineno:
        return None
    indent, step = indentation(file.lines, node)
    return indent, step, insert_index(file.lines, node, indent), bound_in_class(node), node.lineno


def place_from_summary(file: EditableFile, project: Project, qualname: str,
                       methods: list[str]) -> tuple[str, str, int, dict[str, int], int] | None:
    """`_place` from the summary and the lines, where that is sure to give the syntax tree's
    answer: one class of that name in the file, and none of `methods` written anywhere in
    its text, so none bound there; else None (the tree answers). Why: parsing each fixed
    file again would cost more than a check may spend on its fixes."""
    summary = project.summary(file.path)
    info = summary.classes.get(qualname) if summary else None
    if info is None or info.body_line <= info.line:
        return None
    text = "".join(file.lines[info.line - 1: info.end_line])
    name = re.escape(qualname.rsplit(".", 1)[-1])
    if _class_lines(file.src.text, name) != 1 or \
            any(m in text and re.search(rf"\b{re.escape(m)}\b", text) for m in methods):
        return None
    indent, step = indentation_at(file.lines, info.line, info.body_line)
    return indent, step, after_body(file.lines, info.end_line, indent), {}, info.line


def _class_lines(text: str, name: str) -> int:
    """How many lines open with `class <name>` after blanks: the matches of the MULTILINE
    `^[ \t\f]*class[ \t]+<name>\b`, counted from where `class <name>` occurs (a pattern that
    opens with `^` is tried at every character)."""
    count = 0
    for found in re.finditer(rf"class[ \t]+{name}\b", text):
        start = text.rfind("\n", 0, found.start()) + 1
        count += not text[start:found.start()].strip(" \t\f")
    return count


def owner_capture_member(attr: str, indent: str, step: str) -> list[str]:
    """The capture member of a class that holds a decoder body as self.<attr> and makes its own
    logits: what SGLang's owners write (qwen3_5_text.py's Qwen3_5ForCausalLM at 0.5.23):
    the served flag, the default layers for None, the one-layer shift (a decoder captures a
    layer's input), then the decoder's own marker."""
    body = [
        "self.capture_aux_hidden_states = True",
        "if layer_ids is None:",
        f"{step}num_layers = len(self.{attr}.layers)",
        f"{step}layers_to_capture = [2, num_layers // 2, num_layers - 3]",
        "else:",
        f"{step}layers_to_capture = [val + 1 for val in layer_ids]",
        f"self.{attr}.set_eagle3_layers_to_capture(layers_to_capture)",
    ]
    return [f"{indent}def set_eagle3_layers_to_capture(self, layer_ids=None):"] + [
        f"{indent}{step}{line}" for line in body]


def _render_one(intent: Delegate | CaptureAsOwner, imports: ImportPlan, style: str, indent: str, step: str,
                qualname: str) -> tuple[list[str], list[ImportNeed]]:
    if isinstance(intent, CaptureAsOwner):
        return owner_capture_member(intent.attr, indent, step), []
    method, provider_path = intent.function, Path(os.path.abspath(intent.provider.path))
    drop = frozenset(p.name for p in method.params
                     if p.annotation is not None and not names_ok(p.annotation, imports, provider_path))
    drop_return = method.return_annotation is not None and \
        not names_ok(method.return_annotation, imports, provider_path)
    returns_value = any(m.returns_value for i in load_interfaces().values() for m in i.methods
                        if m.name == intent.member)
    delegation = Delegation(qualname.split(".")[-1], intent.attr, method, returns_value, style, drop, drop_return,
                            intent.every_candidate)
    lines = render(delegation, indent, step)
    needs = []
    for p in method.params:
        if p.default:
            needs += imports.require(_names(p.default, value=True), provider_path)
        if p.annotation and p.name not in drop:
            needs += imports.require(_names(p.annotation), provider_path)
    if method.return_annotation and not drop_return:
        needs += imports.require(_names(method.return_annotation), provider_path)
    return lines, needs


def data_member(name: str) -> FunctionInfo:
    """What a delegation copies for an attribute the engine reads (a pack lists it as a property
    or attribute, set on the class or in __init__): a read-only property that forwards it."""
    return FunctionInfo(name, 0, (Param("self", "pos"),), True, decorators=("property",))


def default_refusal(method: FunctionInfo, imports: ImportPlan, provider_path: Path) -> str | None:
    """Why a delegation cannot copy the method's signature, or None: a default value reads a
    name the wrapper's file cannot import as the provider's module binds it. (An annotation
    that cannot be imported is dropped instead.)"""
    for p in method.params:
        if p.default is not None and not names_ok(p.default, imports, provider_path, value=True):
            return f"default of {p.name} uses a name that cannot be imported here"
    return None


def _names(text: str, value: bool = False) -> set[str]:
    """Names an annotation (strings in it too: forward references) or a default value reads."""
    try:
        node = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if value else free_names(node)


def names_ok(text: str, imports: ImportPlan, provider_path: Path, value: bool = False) -> bool:
    """Every name the text reads is a builtin, or one the file binds or can import as the provider's module does."""
    return all(hasattr(builtins, n) or imports.can_provide(n, provider_path) for n in _names(text, value))
