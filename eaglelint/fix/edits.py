"""The edit model every fix shares: a planned file rewrite, a plan, and line edits.

Why apart from the planner: the delegation, owner and marker fixes each build
`FileFix`es with `apply_edits`; keeping these here lets the planner import those
fixes without their importing it back.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding


@dataclass
class FileFix:
    path: Path
    old: bytes
    new: bytes
    encoding: str
    added: list[tuple[str, str]] = field(default_factory=list)  # (class, method)
    imports: list[str] = field(default_factory=list)

    def diff(self, label: str) -> str:
        old = self.old.decode(self.encoding).splitlines(keepends=True)
        new = self.new.decode(self.encoding).splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"a/{label}", f"b/{label}"))


@dataclass
class FixPlan:
    files: list[FileFix] = field(default_factory=list)
    left: list[tuple[Finding, str]] = field(default_factory=list)


class FixError(Exception):
    """A file that could not be written; the original is intact."""


def find_class(tree: ast.Module, qualname: str) -> ast.ClassDef | None:
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in class_scope(body) if n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def class_scope(body: list[ast.stmt]) -> Iterator[ast.ClassDef]:
    for n in body:
        if isinstance(n, ast.ClassDef):
            yield n
        elif isinstance(n, (ast.If, ast.Try, ast.With)):
            for sub in ("body", "orelse", "finalbody"):
                yield from class_scope(getattr(n, sub, []))
            for handler in getattr(n, "handlers", []):
                yield from class_scope(handler.body)


def apply_edits(lines: list[str], edits: list[tuple], newline: str) -> str:
    """Apply (start, new) inserts and (start, end, new) replacements over 0-based line indexes."""
    new_lines = list(lines)
    for start, end, new in sorted(((e[0], e[0], e[1]) if len(e) == 2 else e for e in edits), reverse=True):
        if start > 0 and not new_lines[start - 1].endswith(("\n", "\r")):
            new_lines[start - 1] += newline
        new_lines[start:end] = new
    return "".join(new_lines)


def indentation(lines: list[str], node: ast.ClassDef) -> tuple[str, str]:
    def lead(i: int) -> str:
        line = lines[i - 1]
        # a form feed in the indentation resets the column, as the tokenizer counts it
        return line[: len(line) - len(line.lstrip(" \t\f"))].rsplit("\f", 1)[-1]

    cls_indent = lead(node.lineno)
    first = node.body[0]
    body_line = first.decorator_list[0].lineno if getattr(first, "decorator_list", None) else first.lineno
    indent = lead(body_line)
    step = indent[len(cls_indent):] if indent.startswith(cls_indent) else ""
    return indent, step or ("\t" if "\t" in indent else "    ")


def insert_index(lines: list[str], node: ast.ClassDef, indent: str) -> int:
    """After the class's last statement, and after comment lines that still belong to it."""
    index = node.body[-1].end_lineno
    j = index
    while j < len(lines):
        stripped = lines[j].strip()
        if stripped.startswith("#") and len(lines[j]) - len(lines[j].lstrip(" \t")) >= len(indent):
            index = j + 1
        elif stripped:
            break
        j += 1
    return index
