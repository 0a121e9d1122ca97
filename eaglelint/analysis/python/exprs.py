"""An expression as the symbolic Refs it may denote, bounded in depth and in work.

Why bounded: a Ref as deep as its expression (`x.a.a.a...`, hundreds of levels, which
`ast.parse` accepts) overflows the stack wherever it is later hashed or compared, and
function locals that each use the previous one twice (`a2 = a1 if c else a1`) cost
2**n to expand. Past the bounds the answer is an `unknown` Ref that says why, and
the wrapped class is reported as unresolved instead of crashing or hanging the run.
"""

from __future__ import annotations

import ast

from ..syntax.refs import Ref
from ..syntax.scope import Scope
from .calls import HOOKS

MAX_EXPANSION = 64  # refs kept for one local name
MAX_REF_DEPTH = 64  # nesting of one expression that is followed
MAX_REF_WORK = 5000  # expression nodes visited for one value


def expression_refs(node: ast.expr, scope: Scope | None) -> list[Ref]:
    """Refs for an expression; local names are substituted from `scope` when given."""
    return _Refs(scope).of(node, frozenset(), 0)


class _Refs:
    def __init__(self, scope: Scope | None):
        self.scope = scope
        self.work = 0
        self.strings = False  # inside what a hook reads with literal strings: keep string constants whole

    def of(self, node: ast.expr | Ref, seen: frozenset, depth: int) -> list[Ref]:
        if isinstance(node, Ref):
            return [node]
        self.work += 1
        if depth > MAX_REF_DEPTH or self.work > MAX_REF_WORK:
            return [Ref("unknown", f"expression at line {node.lineno} is too deep to follow")]

        def sub(child: ast.expr, names: frozenset = seen) -> list[Ref]:
            return self.of(child, names, depth + 1)

        if isinstance(node, ast.Name):
            return self._name(node, seen, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, seen, depth)
        if isinstance(node, ast.Call):
            return self._call(node, seen, depth)
        if isinstance(node, ast.Subscript):
            return [Ref("item", args=(b,)) for b in sub(node.value)]
        if isinstance(node, ast.Dict):
            return [Ref("seq", args=tuple(r for v in node.values for r in sub(v)))]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [Ref("seq", args=tuple(r for v in node.elts for r in sub(v)))]
        if isinstance(node, ast.IfExp):
            return sub(node.body) + sub(node.orelse)
        if isinstance(node, ast.BoolOp):
            return [r for v in node.values for r in sub(v)]
        if isinstance(node, ast.NamedExpr):
            return sub(node.value)
        if isinstance(node, ast.Constant):
            if self.strings and isinstance(node.value, str):
                return [Ref("str", node.value)]
            return [Ref("const", repr(node.value)[:40])]
        return [Ref("unknown", f"{type(node).__name__} expression at line {node.lineno}")]

    def _name(self, node: ast.Name, seen: frozenset, depth: int) -> list[Ref]:
        """A local bound in the scope stands for what it was bound to (each binding once)."""
        scope = self.scope
        if scope is None or node.id not in scope.exprs:
            return [Ref("name", node.id)]
        if node.id in seen:
            return []
        out: list[Ref] = []
        for bound in scope.exprs[node.id]:
            out.extend(self.of(bound, seen | {node.id}, depth + 1))
        return out[:MAX_EXPANSION]

    def _attribute(self, node: ast.Attribute, seen: frozenset, depth: int) -> list[Ref]:
        """`self.x` is a Ref of its own; any other `a.x` is the attribute of what `a` refers to."""
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            return [Ref("self", node.attr)]
        return [Ref("attr", node.attr, args=(b,)) for b in self.of(node.value, seen, depth + 1)]

    def _call(self, node: ast.Call, seen: frozenset, depth: int) -> list[Ref]:
        """`d.get(k)` reads an item of `d`; a call an engine's hook reads (calls.py) is what the
        hook makes of it; any other call is a call of what `func` refers to."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            return [Ref("item", args=(b,)) for b in self.of(func.value, seen, depth + 1)]
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        for hook in HOOKS.reading(name):
            found = hook.read(node, name, _Parts(self, seen, depth + 1))
            if found is not None:
                return found
        return [Ref("call", args=(c,)) for c in self.of(func, seen, depth + 1)]


class _Parts:
    """A call's parts as a hook reads them (calls.py `CallReader`): at the call's depth + 1, with
    the names already being expanded, counted in the same work."""

    def __init__(self, reading: _Refs, seen: frozenset, depth: int):
        self.reading = reading
        self.seen = seen
        self.depth = depth

    @property
    def scope(self) -> Scope | None:
        return self.reading.scope

    def refs(self, node: ast.expr, literal_strings: bool = False) -> list[Ref]:
        strings = self.reading.strings
        self.reading.strings = strings or literal_strings
        try:
            return self.reading.of(node, self.seen, self.depth)
        finally:
            self.reading.strings = strings
