"""Local bindings of one function scope, so that summaries can substitute local names.

Why: SGLang often picks the wrapped class in a local first
(`language_model_cls = ...; self.language_model = language_model_cls(...)`).
"""

from __future__ import annotations

import ast

from .refs import Ref

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def walk_local(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of a scope, in order, without entering nested functions or classes.

    Only statements: every binding, return and `self.x = ...` that a summary needs is
    a statement, and skipping expression trees keeps this well below the parse cost.
    Functions and classes defined in the scope are yielded, not entered.
    """
    out: list[ast.stmt] = []
    _walk_block(body, out)
    return out


def _walk_block(block: list[ast.stmt], out: list[ast.stmt]) -> None:
    """A statement, then its blocks, the last first. Recursive: blocks nest at most 100 deep
    (the tokenizer's limit on indentation)."""
    for node in block:
        out.append(node)
        kind = node.__class__
        blocks = _BLOCKS.get(kind)
        if blocks is None:
            blocks = _BLOCKS[kind] = _blocks(kind)
        if not blocks:
            continue
        inner: list[list[ast.stmt]] = []
        for name in blocks:
            if name == "handlers":
                inner += [handler.body for handler in node.handlers]  # type: ignore[attr-defined]
            elif name == "cases":
                inner += [case.body for case in node.cases]  # type: ignore[attr-defined]
            else:
                inner.append(getattr(node, name))
        for stmts in reversed(inner):
            _walk_block(stmts, out)


def nodes_of(node: ast.AST) -> list[ast.AST]:
    """Every node of the tree under `node`, itself first, in `ast.walk`'s order (breadth
    first), as a list: a third of `ast.walk`'s time where the whole tree is read."""
    out = [node]
    append, extend, tree = out.append, out.extend, ast.AST
    i = 0
    while i < len(out):
        current = out[i]
        i += 1
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, tree):
                append(value)
            elif value.__class__ is list:
                extend([item for item in value if isinstance(item, tree)])
    return out


# a statement class -> the fields walk_local enters, in the order it enters them (none for a
# nested scope or a simple statement): read once per class, not tried on every statement
_BLOCKS: dict[type, tuple[str, ...]] = {}


def _blocks(kind: type) -> tuple[str, ...]:
    if issubclass(kind, _NESTED_SCOPES):
        return ()
    fields = getattr(kind, "_fields", ())
    return tuple(name for name in ("body", "orelse", "finalbody", "handlers", "cases") if name in fields)


class Scope:
    """Local bindings of one function: name -> the expressions (or refs) bound to it."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef | None, stmts: list[ast.stmt] | None = None,
                 where: str = ""):
        """`where` names the function (`Class.method`, `function`): a parameter is kept as a
        `param` Ref of it, which the resolver binds to what a caller passes or its default."""
        self.exprs: dict[str, list[ast.expr | Ref]] = {}
        if fn is None:
            return
        a = fn.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None and arg.arg != "self":
                self.exprs[arg.arg] = [Ref("param", arg.arg, where)]
        for node in stmts if stmts is not None else walk_local(fn.body):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._bind(target, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                if node.value is not None:
                    self._bind(node.target, node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                self._bind(node.target, None)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for local, ref in import_bindings(node):
                    self.exprs.setdefault(local, []).append(ref)

    def _bind(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            bound = value if value is not None else Ref("unknown", f"loop variable '{target.id}'")
            self.exprs.setdefault(target.id, []).append(bound)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, None)


def import_bindings(node: ast.Import | ast.ImportFrom):
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, Ref("import", alias.name)
            else:
                top = alias.name.split(".")[0]
                yield top, Ref("import", top)
    else:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name, Ref("import", module, alias.name)
