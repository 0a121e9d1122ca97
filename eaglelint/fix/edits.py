"""The edit model every fix shares, and the one place a file is opened and finished for editing.

Why one model: the delegation, owner and marker fixes, `--add-noqa` and SARIF's
`fixes[]` all speak of the same change: an `Edit` (findings.py: plain data, carried on
the finding it fixes) replaces the lines [start, end) of the file as it was read (an
insertion when start == end) with new lines, written without line endings.
`EditableFile` is where a file's lines, newline, BOM and encoding are found: as the
run read it when a check plans its fixes (`EditableFile.as_checked`), as it is now
when the fix stage applies them; there the edits are applied and the result is
checked to parse and define each new member, and encoded back: handled once here,
so no fix can keep the BOM and lose the `\\r\\n`s. A fix that cannot be written raises
`NotFixable`, whose text is the reason the finding is left without a fix: the one
way the planning stage says no.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.store.cache import SummaryCache
from ..analysis.syntax.class_body import class_node
from ..analysis.syntax.sources import SourceError, parse_source, read_source, split_lines
from ..findings import Edit, Finding, Written

if TYPE_CHECKING:  # the edit model is data; a project is only handed in
    from ..analysis.python.project import Project

BOM = b"\xef\xbb\xbf"


class NotFixable(Exception):
    """A finding (or a file's findings) that no fix is written for; str() says why."""


class FixError(Exception):
    """A file that could not be written; the original is intact."""


@dataclass
class FileFix:
    path: Path
    old: bytes
    new: bytes
    encoding: str
    writes: list[Written] = field(default_factory=list)  # what its fixes write, each once
    imports: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)  # in the coordinates of `old`, what SARIF's fixes[] says
    newline: str = "\n"
    findings: list[Finding] = field(default_factory=list)  # the findings this rewrite fixes
    defines: list[tuple[str, str]] = field(default_factory=list)  # (class, method) the result must define
    # each finding's share of `edits`: its own, and the import lines written for its needs
    edits_of: dict[Finding, list[Edit]] = field(default_factory=dict)

    def diff(self, label: str) -> str:
        old = self.old.decode(self.encoding).splitlines(keepends=True)
        new = self.new.decode(self.encoding).splitlines(keepends=True)
        import difflib  # here, not at the top: a check that plans fixes shows no diff

        return "".join(difflib.unified_diff(old, new, f"a/{label}", f"b/{label}"))


@dataclass
class FixPlan:
    files: list[FileFix] = field(default_factory=list)
    left: list[tuple[Finding, str]] = field(default_factory=list)


CHANGED = "file changed since it was checked (another fix running?); run again"


class EditableFile:
    """One file as a fix reads it: refused through a symbolic link, or when it changed since
    the run read it; its lines with their endings, its newline, the digest of its bytes
    (what a planned fix is checked against), and (on demand) its tree."""

    def __init__(self, path: Path, project: Project | None = None, checked: bool = False):
        if path.is_symlink():
            raise NotFixable("is a symbolic link; eaglelint does not rewrite through links")
        try:
            if checked and project is not None:
                self.src = project.source(path)
            else:
                self.src = project.current_source(path) if project is not None else read_source(path)
        except SourceError as exc:
            raise NotFixable(str(exc)) from None
        if project is not None and project.changed_since_read(path, self.src.raw):
            raise NotFixable(CHANGED)
        self.path = path
        self.project = project if checked else None
        self.digest = SummaryCache.key(self.src.raw)
        self.lines = split_lines(self.src.text)
        first = self.lines[0] if self.lines else ""
        self.newline = "\r\n" if first.endswith("\r\n") else "\r" if first.endswith("\r") else "\n"
        self._tree: ast.Module | None = None

    @classmethod
    def as_checked(cls, path: Path, project: Project) -> EditableFile:
        """The file as this run read and checked it: what a check plans its findings' fixes on.
        Its tree is the project's, shared with the checks (never changed): not parsed again."""
        return cls(path, project, checked=True)

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = self.project.tree(self.path) if self.project is not None else parse_source(self.src)
            except RecursionError:
                raise NotFixable("nested too deeply to edit safely; nothing written") from None
            except SourceError as exc:
                raise NotFixable(str(exc)) from None
        return self._tree

    def apply(self, edits: list[Edit]) -> str:
        """The text with `edits` applied; insertions at one place keep the order given."""
        return apply_edits(self.lines, edits, self.newline)

    def finish(self, edits: list[Edit], writes: list[Written] | None = None,
               imports: list[str] | None = None, defines: list[tuple[str, str]] | None = None,
               findings: list[Finding] | None = None) -> FileFix:
        """The rewrite, if the edited text parses and defines each (class, method) of `defines`
        in that class; encoded as the file was (its encoding, and a BOM it had)."""
        text = self.apply(edits)
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            raise NotFixable(f"edited source would not parse ({exc.msg}); nothing written") from None
        except RecursionError:
            raise NotFixable("nested too deeply to edit safely; nothing written") from None
        for qualname, method in defines or []:
            node = class_node(tree, qualname)
            if node is None or not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method
                                       for n in node.body):
                raise NotFixable(f"new {qualname}.{method} would not land in its class; nothing written")
        return FileFix(self.path, self.src.raw, self.encode(text), self.src.encoding, list(dict.fromkeys(writes or [])),
                       list(imports or []), list(edits), self.newline, list(findings or []), list(defines or []))

    def merge(self, first: FileFix, second: FileFix) -> FileFix:
        """Two rewrites of this file (two rule families' fixes) as one, where their edits keep
        apart: an edit both make is made once; two that touch one line, or insert different
        lines at one place (two import lines isort would merge), refuse `second` (NotFixable)."""
        edits = list(first.edits)
        for new in second.edits:
            if new in edits:
                continue  # the same import line, added by both
            clash = next((old for old in edits if _clash(old, new)), None)
            if clash is not None:
                fixes = ", ".join(w.action() for w in first.writes)
                raise NotFixable(f"its edit of line {new.start + 1} meets the fix that would {fixes}; "
                                 "run eaglelint fix again")
            edits.append(new)
        merged = self.finish(edits, first.writes + second.writes, first.imports + second.imports,
                             first.defines + second.defines, first.findings + second.findings)
        merged.edits_of = {**first.edits_of, **second.edits_of}
        return merged

    def encode(self, text: str) -> bytes:
        """A BOM the decoder dropped (any encoding but `utf-8-sig`, which writes its own) is put back."""
        keep = self.src.raw.startswith(BOM) and not self.src.encoding.endswith("-sig")
        return (BOM if keep else b"") + text.encode(self.src.encoding)


# A rule family's fix planner: one file as checked and the family's fixable findings in it ->
# those findings, each with its `fix` or its `fix_refusal` (the reason); NotFixable refuses
# every finding of the file. Called once per file by the check (checks/run.py), never by `fix`.
Planner = Callable[[EditableFile, list[Finding], "Project", str], list[Finding]]


def _clash(a: Edit, b: Edit) -> bool:
    """Edits that cannot both be made to the lines as read: overlapping replacements, an
    insertion inside a replaced range, or different insertions at one place."""
    if a.start == a.end and b.start == b.end:
        return a.start == b.start
    if a.start == a.end:
        return b.start < a.start < b.end
    if b.start == b.end:
        return a.start < b.start < a.end
    return a.start < b.end and b.start < a.end


def apply_edits(lines: list[str], edits: list[Edit], newline: str) -> str:
    """Apply edits over 0-based line indexes of `lines`, bottom first so indexes hold.

    Insertions at one place land in the order given; a replacement and an insertion at
    its start put the insertion first. A last line without an ending gets one before
    anything is added after it, and keeps none when it is replaced."""
    new_lines = list(lines)
    order = sorted(range(len(edits)), key=lambda i: (edits[i].start, edits[i].end, i), reverse=True)
    for i in order:
        edit = edits[i]
        if edit.start > 0 and not new_lines[edit.start - 1].endswith(("\n", "\r")):
            new_lines[edit.start - 1] += newline
        new = [line + newline for line in edit.lines]
        if new and edit.end == len(lines) > edit.start and not lines[-1].endswith(("\n", "\r")):
            new[-1] = edit.lines[-1]  # the file's last line had no ending: its replacement has none
        new_lines[edit.start:edit.end] = new
    return "".join(new_lines)


def indentation(lines: list[str], node: ast.ClassDef) -> tuple[str, str]:
    first = node.body[0]
    decorators = getattr(first, "decorator_list", None)
    body_line = decorators[0].lineno if decorators else first.lineno
    return indentation_at(lines, node.lineno, body_line)


def indentation_at(lines: list[str], class_line: int, body_line: int) -> tuple[str, str]:
    """The class body's indentation and one step of it, from the 1-based lines of the class
    header and of its first body statement (ClassInfo.line, ClassInfo.body_line)."""

    def lead(i: int) -> str:
        line = lines[i - 1]
        # a form feed in the indentation resets the column, as the tokenizer counts it
        return line[: len(line) - len(line.lstrip(" \t\f"))].rsplit("\f", 1)[-1]

    cls_indent = lead(class_line)
    indent = lead(body_line)
    step = indent[len(cls_indent):] if indent.startswith(cls_indent) else ""
    return indent, step or ("\t" if "\t" in indent else "    ")


def insert_index(lines: list[str], node: ast.ClassDef, indent: str) -> int:
    """After the class's last statement, and after comment lines that still belong to it."""
    return after_body(lines, node.body[-1].end_lineno or node.lineno, indent)


def after_body(lines: list[str], last: int, indent: str) -> int:
    """0-based index after the 1-based line `last` that ends a class body, and after the comment
    lines indented at least as the body (`indent`) that follow it."""
    index = j = last
    while j < len(lines):
        stripped = lines[j].strip()
        if stripped.startswith("#") and len(lines[j]) - len(lines[j].lstrip(" \t")) >= len(indent):
            index = j + 1
        elif stripped:
            break
        j += 1
    return index
