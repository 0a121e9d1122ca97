"""The imports that copied signatures need in the edited file, merged or added.

Why: a delegation copies the wrapped method's annotations and defaults
(`Optional[List[int]]`, `torch.Tensor`), and those names must resolve in the
wrapper's file. Each is imported the way the wrapped method's own module imports
it, merged into an existing `from X import ...` line when there is one, else added
where isort (and ruff's `I` rules, SGLang's pre-commit runs isort with the black
profile) would put it: in its section (future, standard library, third party, first
party, relative), `import x` lines before `from x import` lines, each sorted by
module; a section the file lacks is opened with a blank line around it. So a fixed
file passes the fork's isort hook without a second round. Nothing already bound is
imported again.

Two halves, at two times: `ImportPlan` says which imports a fix's code needs
(`ImportNeed`, carried on the finding) when the check plans the fix, from summaries
alone; `ImportWriter` turns the needs of the findings being fixed together into line
edits when the fix is applied, reading the file's own import statements. So the
imports of findings fixed together share their lines, and a finding fixed alone
imports only what it needs.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from ..analysis.python.project import Project
from ..analysis.python.summary import ModuleSummary
from ..analysis.syntax.refs import Ref
from ..analysis.syntax.sources import end_line
from ..findings import Edit, ImportNeed
from .delegation import MAX_LINE


class ImportPlan:
    """The imports a file's fixes need, found from the summaries (no syntax tree)."""

    def __init__(self, wrapper: ModuleSummary | None, project: Project, path: Path):
        self.bound = set(wrapper.names) if wrapper else set()
        self.wrapper = wrapper
        self.project, self.path = project, path
        self.needs: dict[str, ImportNeed] = {}  # bound name -> its import, in the order first needed
        self._root_list: list[Path] | None = None

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
                if location is None:
                    return None
                module = self._module_name(location)
            if ref.attr:
                return ("from", module, ref.attr)
            return ("import", module, None)
        return ("from", self._module_name(provider_path), name)

    def can_provide(self, name: str, provider_path: Path) -> bool:
        return name in self.bound or self._spec(name, provider_path) is not None

    def require(self, names: set[str], provider_path: Path) -> list[ImportNeed]:
        """The imports that bind `names` as the provider's module binds them (a name the file
        binds itself needs none); the ones an earlier fix of the file needs too are returned
        again: each fix carries every import it needs."""
        out = []
        for name in sorted(names):
            if name in self.needs:
                out.append(self.needs[name])
                continue
            if name in self.bound:
                continue
            spec = self._spec(name, provider_path)
            if spec is None:
                continue
            kind, module, attr = spec
            if kind == "import":
                top = module.split(".")[0]
                need = ImportNeed(module, None, None if top == name else name)
            else:
                need = ImportNeed(module, attr, None if attr == name else name)
            out.append(self.add(need))
        return out

    def add(self, need: ImportNeed) -> ImportNeed:
        """Need `need` (a fix that chose the import itself: merged into a line it found)."""
        self.needs[need.bound] = need
        self.bound.add(need.bound)
        return need

    def _module_name(self, location: Path) -> str:
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
        steps = Path(os.path.relpath(location, self.path.parent)).parts
        ups = sum(1 for p in steps if p == "..")
        rest = [p.removesuffix(".py") for p in steps if p != ".."]
        if rest and rest[-1] == "__init__":
            rest.pop()
        return "." * (ups + 1) + ".".join(rest)

    def _roots(self) -> list[Path]:
        if self._root_list is None:
            self._root_list = self._find_roots()
        return self._root_list

    def _find_roots(self) -> list[Path]:
        roots: list[Path] = []
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



class ImportWriter:
    """The line edits that give a file the imports some fixes need, read from its own import
    statements (the file as it is now: the fix stage's tree)."""

    def __init__(self, tree: ast.Module, lines: list[str], newline: str, project: Project, path: Path):
        self.tree, self.lines, self.newline = tree, lines, newline
        self.project, self.path = project, path
        self.added: list[str] = []

    def edits(self, needs: list[ImportNeed]) -> list[tuple[Edit, set[ImportNeed]]]:
        """The import lines to merge into or add to the file, each with the needs it serves."""
        from_imports: dict[str, list[ImportNeed]] = {}
        plain: list[ImportNeed] = []
        for need in dict.fromkeys(needs):
            if need.name is None:
                plain.append(need)
            else:
                from_imports.setdefault(need.module, []).append(need)
        out: list[tuple[Edit, set[ImportNeed]]] = []
        new_lines: list[tuple[str, str, set[ImportNeed]]] = []  # (module, line, needs)
        top = [n for n in self.tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        for module, items in from_imports.items():
            names = [(n.name or "", n.asname) for n in items]
            level = len(module) - len(module.lstrip("."))
            existing = next((n for n in top if isinstance(n, ast.ImportFrom) and n.level == level
                             and (n.module or "") == module.lstrip(".")
                             and not any(a.name == "*" for a in n.names)), None)
            if existing is not None:
                out.append((self._merge(existing, names), set(items)))
            else:
                new_lines.append((module, self._render_from(module, sorted(names), multiline=False), set(items)))
            self.added += [f"from {module} import {_alias(a, b)}" for a, b in names]
        for need in plain:
            text = f"import {need.module}" + (f" as {need.asname}" if need.asname else "")
            new_lines.append((need.module, text, {need}))
            self.added.append(text)
        if new_lines and not top:
            at = self._insert_index(top)
            ordered = sorted(new_lines, key=lambda item: self._order(item[:2]))
            out.append((Edit(at, at, tuple(line for _, line, _ in ordered)),
                        {n for _, _, served in new_lines for n in served}))
        elif new_lines:
            out += self._placed(top, new_lines)
        return out

    def _order(self, item: tuple[str, str]) -> tuple[int, bool, str]:
        """isort's order: section, then `import x` before `from x import`, then module name."""
        module, line = item
        return self._section(module), line.startswith("from "), module.lstrip(".").lower()

    def _node_order(self, node: ast.Import | ast.ImportFrom) -> tuple[int, bool, str]:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            return self._order((module, "from "))
        return self._order((node.names[0].name, "import "))

    def _section(self, module: str) -> int:
        top = module.split(".")[0]
        if module.startswith("."):
            return 4
        if top == "__future__":
            return 0
        if top in sys.stdlib_module_names:
            return 1
        # first party, as isort finds it: a module of the tree being fixed, not an installed one
        return 3 if self.project.resolve_module(top, self.path) is not None else 2

    def _placed(self, top: list[ast.Import | ast.ImportFrom],
                new_lines: list[tuple[str, str, set[ImportNeed]]]) -> list[tuple[Edit, set[ImportNeed]]]:
        """Each new line at its isort position among the existing top-level imports."""
        groups: dict[int, list[tuple[tuple, str, str]]] = {}  # index -> (order, line, where)
        serves: dict[int, set[ImportNeed]] = {}
        for module, line, needs in sorted(new_lines, key=lambda item: self._order(item[:2])):
            item = (module, line)
            order = self._order(item)
            same = [n for n in top if self._node_order(n)[0] == order[0]]
            if same:
                after = next((n for n in same if self._node_order(n) > order), None)
                at, where = (after.lineno - 1, "in") if after else (max(end_line(n) for n in same), "in")
            else:
                later = [n for n in top if self._node_order(n)[0] > order[0]]
                at, where = (later[0].lineno - 1, "before") if later else (max(end_line(n) for n in top), "after")
            groups.setdefault(at, []).append((order, item[1], where))
            serves.setdefault(at, set()).update(needs)
        out = []
        for at, items in groups.items():
            lines: list[str] = [""] if items[0][2] == "after" else []
            for i, (order, line, _) in enumerate(items):
                if i and items[i - 1][0][0] != order[0]:
                    lines.append("")  # isort keeps one blank line between sections
                lines.append(line)
            if items[-1][2] == "before":
                lines.append("")
            out.append((Edit(at, at, tuple(lines)), serves[at]))
        return out

    def _insert_index(self, top: list[ast.Import | ast.ImportFrom]) -> int:
        if top:
            return max(end_line(n) for n in top)
        first = self.tree.body[0] if self.tree.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            return end_line(first)  # after the module's docstring
        return 0

    def _merge(self, node: ast.ImportFrom, names: list[tuple[str, str | None]]) -> Edit:
        first, last = node.lineno - 1, end_line(node) - 1
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
        comment = tail.strip()
        if not multiline and comment.startswith("#") and len(text.rstrip("\r\n")) > MAX_LINE:
            # as isort and ruff wrap a line that a comment makes too long: the comment after `(`
            wrapped = self._render_from(module, merged, multiline=True)
            text = head + wrapped.replace("(", f"(  {comment}", 1) + tail[len(tail.rstrip("\r\n")):]
        return Edit(first, last + 1, (text.rstrip("\r\n"),))

    def _render_from(self, module: str, names: list[tuple[str, str | None]], multiline: bool) -> str:
        items = [_alias(a, b) for a, b in names]
        one = f"from {module} import {', '.join(items)}"
        if not multiline and len(one) <= MAX_LINE:
            return one
        inner = "".join(f"    {item},{self.newline}" for item in items)
        return f"from {module} import ({self.newline}{inner})"


def _alias(name: str, asname: str | None) -> str:
    return f"{name} as {asname}" if asname else name
