"""Which statements make a class, as Python builds it: the syntax-only parts of a summary.

Why apart from summary.py: Python runs a class body like any block, so a method
defined under a class-body `if`/`else`/`try`/`with` is a member, one under
`if TYPE_CHECKING:` is not (the constant is False at run time), and a class can
still gain members after its body (a `setattr(C, ...)`, a `C.name = ...`), which
eaglelint cannot weigh and so must report as unknown rather than as absent.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator


def is_type_checking(test: ast.AST) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING`: False when the code runs."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def class_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a class body runs, in order, entering if/try/with blocks, without
    entering nested functions or classes. An `if TYPE_CHECKING:` body never runs (its
    else does); an `if not TYPE_CHECKING:` body always does."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            test, negated = node.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if is_type_checking(test):
                out += class_statements(node.body if negated else node.orelse)
            else:
                out += class_statements(node.body) + class_statements(node.orelse)
        elif isinstance(node, ast.Try):
            out += class_statements(node.body)
            for handler in node.handlers:
                out += class_statements(handler.body)
            out += class_statements(node.orelse) + class_statements(node.finalbody)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            out += class_statements(node.body)
        else:
            out.append(node)
    return out


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of names, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def late_members(stmts: list[ast.stmt]) -> dict[str, list[tuple[int, str, str]]]:
    """Module-level statements that add to a class after its body: class name -> (line, how,
    the member's name, or "" where it is not a literal: `setattr(C, name, f)`)."""
    out: dict[str, list[tuple[int, str, str]]] = {}
    for node in stmts:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute):
                owner = dotted(target.value)
                if owner:
                    out.setdefault(owner, []).append((node.lineno, f"{owner}.{target.attr} is assigned", target.attr))
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr" \
                and call.args:
            owner = dotted(call.args[0])
            if owner:
                out.setdefault(owner, []).append((node.lineno, f"setattr({owner}, ...)", _literal_name(call)))
    return out


def _literal_name(call: ast.Call) -> str:
    """The name `setattr(obj, "name", value)` sets, or "" where it is not a literal."""
    key = call.args[1] if len(call.args) > 1 else None
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else ""


def members_added_to_argument(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """What a class decorator adds to the class it hands back: every return of its own body
    gives back the first parameter, and each change to it is `cls.name = ...` or
    `setattr(cls, "name", ...)`: those names (none: a harmless decorator, such as a
    registry's `register(cls)`). None where it does anything else, or anything it cannot
    be sure of (a computed name, a change to another object, `type(...)`)."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if not params:
        return None
    first = params[0]
    returns = False
    added: list[str] = []
    for node in local_nodes(fn):
        if isinstance(node, ast.Return):
            if not (isinstance(node.value, ast.Name) and node.value.id == first):
                return None
            returns = True
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if not (isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and node.value.id == first):
                return None
            added.append(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "type"):
            name = _literal_name(node) if node.func.id == "setattr" else ""
            if not (name and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == first):
                return None
            added.append(name)
    return tuple(dict.fromkeys(added)) if returns else None


def star_module(node: ast.Import | ast.ImportFrom) -> str | None:
    """The module of a `from m import *`, spelled as written (leading dots kept)."""
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        return "." * node.level + (node.module or "")
    return None


def bound_in_class(node: ast.ClassDef) -> dict[str, int]:
    """Every name the class body binds when it runs (under if/else/try/with too: a def, an
    assignment, an import), and every `self.X = ...` in its methods: name -> line. A
    generated member must never replace any of them."""
    out: dict[str, int] = {}
    for stmt in class_statements(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(stmt.name, stmt.lineno)
            if not isinstance(stmt, ast.ClassDef):
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) \
                            and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                        out.setdefault(sub.attr, sub.lineno)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], stmt.lineno)
        else:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    out.setdefault(sub.id, stmt.lineno)
    return out


def class_node(tree: ast.Module, qualname: str) -> ast.ClassDef | None:
    """The class the summary names `qualname` (summary.py): each part a class statement of the
    body before it, entering if/try/with blocks, never a function. The one lookup of a class
    by name: the checks reading a class body, and a fix editing it, must find the same class."""
    body: list[ast.stmt] = tree.body
    node = None
    for part in qualname.split("."):
        node = next((n for n in class_scope(body) if n.name == part), None)
        if node is None:
            return None
        body = node.body
    return node


def class_scope(body: list[ast.stmt]) -> Iterator[ast.ClassDef]:
    """Class statements of a body, under if/try/with blocks too."""
    for n in body:
        if isinstance(n, ast.ClassDef):
            yield n
        elif isinstance(n, (ast.If, ast.Try, ast.With, ast.AsyncWith)):
            for sub in ("body", "orelse", "finalbody"):
                yield from class_scope(getattr(n, sub, []))
            for handler in getattr(n, "handlers", []):
                yield from class_scope(handler.body)


def method_node(cls: ast.ClassDef, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                None)


def local_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's own body: nested functions, classes and lambdas are not entered."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
