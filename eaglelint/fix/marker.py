"""The fix for EGL030: list vLLM's marker protocol in the wrapper's bases, import it, and
forward the protocol members the marker alone would get wrong (analysis/vllm/marker.py: delegations).

Why this shape: vLLM model classes list their protocols last in the bases
(`class X(nn.Module, SupportsMultiModal, SupportsPP, SupportsEagle3)`) and import them
from `.interfaces` in one import line; the fix appends the marker to the bases
(keeping a one-base-per-line header one per line, and wrapping a header that grows
past 88 columns the way ruff format would) and merges the name into the import
that already reads that module. Where the wrapper must also forward
`set_aux_hidden_state_layers` / `get_eagle3_default_aux_hidden_state_layers` (its
language model defines its own, as DeepseekV2ForCausalLM does, or the protocol's
defaults cannot reach it), plain forwarding methods go at the end of the class body,
with the language model's own signature, as vLLM's KimiK25ForConditionalGeneration
writes them. As for method delegations, every other byte of the file is kept and a
file is only written if the result parses.
"""

from __future__ import annotations

import ast
import builtins
import os
from dataclasses import replace
from pathlib import Path

from ..analysis.python.project import Project
from ..analysis.python.summary import free_names_of_text
from ..analysis.syntax.class_body import class_node
from ..findings import Finding, Fix, ImportNeed, Written
from .delegation import MAX_LINE, Delegation, render
from .edits import Edit, EditableFile, NotFixable, indentation, insert_index
from .imports import ImportPlan
from .intent import Forward, MarkerBase


def _marker_module(project: Project, intent: MarkerBase) -> Path:
    """The file that defines the marker, as the class that lists it imports it."""
    marker, lister_path = intent.marker, Path(os.path.abspath(intent.lister.path))
    lister = project.summary(lister_path)
    for ref in (lister.names.get(marker, []) if lister else []):
        if ref.kind == "class":
            return lister_path
        if ref.kind == "import" and ref.attr == marker:
            location = project.resolve_module(ref.name, lister_path)
            if location is not None and location.suffix == ".py":
                return location
    raise NotFixable(f"cannot tell where {marker} is defined; add it by hand")


def plan_marker_file(file: EditableFile, findings: list[Finding], project: Project, style: str) -> list[Finding]:
    """Each finding with its fix: the marker base, its import and the forwarding methods its
    check decided on (`Finding.intent`); any finding of the file that cannot be fixed refuses
    them all (NotFixable)."""
    path, tree, lines = file.path, file.tree, file.lines
    imports = ImportPlan(project.summary(path), project, path)
    summary = project.summary(path)
    bound = set(summary.names) if summary else set()
    out: list[Finding] = []
    for f in findings:
        intent = f.intent
        if not isinstance(intent, MarkerBase):
            out.append(replace(f, fix_refusal=f"{f.message} (no automatic fix for {f.code})"))
            continue
        node = class_node(tree, f.class_name)
        if node is None or node.body[0].lineno == node.lineno:
            raise NotFixable("class cannot be located for editing")
        edits = [_base_edit(lines, node, intent.marker)]
        if intent.forwards:
            indent, step = indentation(lines, node)
            wrapper = f.class_name.split(".")[-1]
            methods = [line for forward in intent.forwards
                       for line in ["", *_forward(intent, forward, wrapper, bound, indent, step)]]
            at = insert_index(lines, node, indent)
            edits.append(Edit(at, at, tuple(methods)))
        needs = _import_marker(imports, tree, project, path, intent.marker, _marker_module(project, intent))
        writes = (Written("base", f.class_name, intent.marker),
                  *(Written("method", f.class_name, forward.name) for forward in intent.forwards))
        out.append(replace(f, fix=Fix(tuple(edits), writes, file.digest, tuple(needs), rank=len(out))))
    return out


def _forward(intent: MarkerBase, forward: Forward, wrapper: str, bound: set[str], indent: str,
             step: str) -> list[str]:
    """`def name(...)` that calls the same member on the held language model. Where the
    checkpoint's config picks that model, it first raises a clear AttributeError when the
    class held lacks the member (the `raise` style's check), as some classes it may be do."""
    fn = forward.function
    if fn is None:
        raise NotFixable(f"{forward.source.qualname}.{forward.name} is not a plain method; forward it by hand")

    def importable(text: str | None) -> bool:
        return text is None or all(hasattr(builtins, n) or n in bound for n in free_names_of_text(text))

    drop = frozenset(p.name for p in fn.params if not importable(p.annotation))
    if any(p.default is not None for p in fn.params):
        raise NotFixable(f"{forward.source.qualname}.{forward.name} has parameter defaults; forward it by hand")
    return render(Delegation(wrapper, intent.attr, fn, fn.returns_value, "raise" if intent.raising else "plain",
                             drop, not importable(fn.return_annotation), every_candidate=forward.every_candidate),
                  indent, step)


def _import_marker(imports: ImportPlan, tree: ast.Module, project: Project, path: Path, marker: str,
                   location: Path) -> list[ImportNeed]:
    """The import of the marker the fix needs: none where the file binds it itself."""
    if marker in imports.needs:
        return [imports.needs[marker]]
    if marker in imports.bound or os.path.abspath(location) == os.path.abspath(path):
        return []
    for node in tree.body:  # an import of that module is there already: merge into it
        if isinstance(node, ast.ImportFrom) and not any(a.name == "*" for a in node.names):
            spelled = "." * node.level + (node.module or "")
            found = project.resolve_module(spelled, path)
            if found is not None and os.path.abspath(found) == os.path.abspath(location):
                return [imports.add(ImportNeed(spelled, marker))]
    needs = imports.require({marker}, location)
    if marker not in imports.bound:
        raise NotFixable(f"cannot write an import of {marker} here; add it by hand")
    return needs


def _base_edit(lines: list[str], node: ast.ClassDef, marker: str) -> Edit:
    if not node.bases or node.keywords:
        raise NotFixable("the class has no bases, or keyword arguments in its header; add the base by hand")
    last = node.bases[-1]
    end_line, end_col = last.end_lineno or last.lineno, last.end_col_offset or 0
    index = end_line - 1
    raw = lines[index].rstrip("\r\n").encode()
    before, after = raw[:end_col].decode(), raw[end_col:].decode()
    lead = before[: len(before) - len(before.lstrip(" \t"))]
    if end_line > node.lineno and after.strip() == ",":  # one base per line, trailing comma
        return Edit(index + 1, index + 1, (f"{lead}{marker},",))
    one = f"{before}, {marker}{after}"
    if end_line > node.lineno or len(one.expandtabs(4)) <= MAX_LINE or after.strip() != "):":
        return Edit(index, index + 1, (one,))
    # `class X(A, B):` grown too long: wrap it as ruff format does
    head = raw[: node.bases[0].col_offset].decode().rstrip().removesuffix("(")
    bases = [raw[b.col_offset: b.end_col_offset].decode() for b in node.bases] + [marker]
    step = "\t" if "\t" in lead else "    "
    middle = f"{lead}{step}{', '.join(bases)}"
    body = [middle] if len(middle.expandtabs(4)) <= MAX_LINE else [f"{lead}{step}{b}," for b in bases]
    return Edit(index, index + 1, (f"{head}(", *body, f"{lead}){after.strip()[1:]}"))
