"""The imports that copied signatures need in the edited file, merged or added.

Why: a delegation copies the wrapped method's annotations and defaults
(`Optional[List[int]]`, `torch.Tensor`), and those names must resolve in the
wrapper's file. Each is imported the way the wrapped method's own module imports
it, merged into an existing `from X import ...` line when there is one, else added
after the last top-level import. Nothing already bound is imported again.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from .modules import Project
from .refs import Ref
from .summary import ModuleSummary

MAX_LINE = 88


class ImportPlan:
    def __init__(self, tree: ast.Module, lines: list[str], newline: str, wrapper: ModuleSummary | None,
                 project: Project, path: Path):
        self.tree, self.lines, self.newline = tree, lines, newline
        self.bound = set(wrapper.names) if wrapper else set()
        self.wrapper = wrapper
        self.project, self.path = project, path
        self.from_imports: dict[str, list[tuple[str, str | None]]] = {}
        self.plain: list[tuple[str, str | None]] = []
        self.added: list[str] = []

    # -- what a name needs -------------------------------------------------
    def _spec(self, name: str, provider_path: Path) -> tuple[str, str, str | None] | None:
        """("from", module, attr) / ("import", module, None) that binds `name` as the provider does."""
        provider = self.project.summary(provider_path)
        if provider is None or name not in provider.names:
            return None
        ref: Ref = provider.names[name][0]
        if ref.kind == "import":
            module = ref.name
            if module.startswith("."):
                location = self.project.resolve_module(module, provider_path)
                module = self._module_name(location) if location else None
                if module is None:
                    return None
            if ref.attr:
                return ("from", module, ref.attr)
            return ("import", module, None)
        module = self._module_name(provider_path)
        return ("from", module, name) if module else None

    def can_provide(self, name: str, provider_path: Path) -> bool:
        return name in self.bound or self._spec(name, provider_path) is not None

    def require(self, names: set[str], provider_path: Path) -> None:
        for name in sorted(names - self.bound):
            spec = self._spec(name, provider_path)
            if spec is None:
                continue
            kind, module, attr = spec
            if kind == "import":
                top = module.split(".")[0]
                self.plain.append((module, None if top == name else name))
            else:
                self.from_imports.setdefault(module, []).append((attr, None if attr == name else name))
            self.bound.add(name)

    def _module_name(self, location: Path) -> str | None:
        """Dotted name for a file, from the root that the wrapper's own absolute imports use."""
        location = Path(os.path.abspath(location))
        for root in self._roots():
            try:
                rel = location.relative_to(root)
            except ValueError:
                continue
            parts = list(rel.parts)
            parts[-1] = parts[-1].removesuffix(".py")
            if parts[-1] == "__init__":
                parts.pop()
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
        rel = os.path.relpath(location, self.path.parent)
        parts = Path(rel).parts
        ups = sum(1 for p in parts if p == "..")
        rest = [p.removesuffix(".py") for p in parts if p != ".."]
        if rest and rest[-1] == "__init__":
            rest.pop()
        return "." * (ups + 1) + ".".join(rest)

    def _roots(self) -> list[Path]:
        roots = []
        for refs in (self.wrapper.names.values() if self.wrapper else []):
            for ref in refs:
                if ref.kind != "import" or ref.name.startswith("."):
                    continue
                found = self.project.resolve_module(ref.name, self.path)
                if found is None:
                    continue
                depth = len(ref.name.split(".")) + (1 if found.name == "__init__.py" else 0)
                root = Path(os.path.abspath(found)).parents[depth - 1]
                if root not in roots:
                    roots.append(root)
        return roots

    # -- edits -------------------------------------------------------------
    def edits(self) -> list[tuple[int, int, list[str]]]:
        """(start, end, new lines) over 0-based line indexes of the file."""
        out = []
        new_lines: list[str] = []
        top = [n for n in self.tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for module, names in self.from_imports.items():
            level = len(module) - len(module.lstrip("."))
            existing = next((n for n in top if isinstance(n, ast.ImportFrom) and n.level == level
                             and (n.module or "") == module.lstrip(".")
                             and not any(a.name == "*" for a in n.names)), None)
            if existing is not None:
                out.append(self._merge(existing, names))
            else:
                new_lines.append(self._render_from(module, sorted(names), multiline=False))
            self.added += [f"from {module} import {_alias(a, b)}" for a, b in names]
        for module, asname in self.plain:
            text = f"import {module}" + (f" as {asname}" if asname else "")
            new_lines.append(text)
            self.added.append(text)
        if new_lines:
            at = self._insert_index(top)
            out.append((at, at, [line + self.newline for line in new_lines]))
        return out

    def _insert_index(self, top: list[ast.stmt]) -> int:
        if top:
            return max(n.end_lineno for n in top)
        body = self.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[0].end_lineno
        return 0

    def _merge(self, node: ast.ImportFrom, names: list[tuple[str, str | None]]) -> tuple[int, int, list[str]]:
        first, last = node.lineno - 1, node.end_lineno - 1
        tail_line = self.lines[last]
        tail = tail_line.encode()[node.end_col_offset:].decode()
        head = self.lines[first].encode()[: node.col_offset].decode()
        current = [(a.name, a.asname) for a in node.names]
        new = sorted(n for n in names if n not in current)
        # keep an isort-sorted line sorted; otherwise append, touching nothing that was there
        merged = sorted(current + new) if current == sorted(current) else current + new
        multiline = first != last
        module = "." * node.level + (node.module or "")
        text = head + self._render_from(module, merged, multiline) + tail
        return (first, last + 1, [text])

    def _render_from(self, module: str, names: list[tuple[str, str | None]], multiline: bool) -> str:
        items = [_alias(a, b) for a, b in names]
        one = f"from {module} import {', '.join(items)}"
        if not multiline and len(one) <= MAX_LINE:
            return one
        inner = "".join(f"    {item},{self.newline}" for item in items)
        return f"from {module} import ({self.newline}{inner})"


def _alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name
