"""Per-module summaries: all that later stages need from one file, taken in one `ast` pass.

Why plain `ast` and not astroid trees: a summary is small, plain data (so it can be
cached and compared), costs one parse, and never executes or imports the code it
describes. Expressions that later stages must evaluate across modules (a wrapped
class, a base class, what a helper returns) are kept as symbolic `Ref`s; names local
to a function are substituted here, while the function's scope is at hand.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field

from .exprs import MAX_EXPANSION, expression_refs
from .refs import Ref
from .scope import Scope, import_bindings, walk_local
from .sources import SourceLines


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # posonly | pos | vararg | kwonly | varkw
    annotation: str | None = None
    default: str | None = None


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    line: int
    params: tuple[Param, ...]
    returns_value: bool
    returns: tuple[Ref, ...] = ()
    decorators: tuple[str, ...] = ()
    return_annotation: str | None = None
    is_async: bool = False
    # Free names that the signature (annotations, defaults) uses: a fix that copies
    # the signature into another file must import them there.
    signature_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class WrapperAssign:
    line: int
    values: tuple[Ref, ...]


@dataclass
class ClassInfo:
    name: str  # qualified within the module: Outer.Inner for nested classes
    line: int
    column: int
    end_line: int
    bases: tuple[Ref, ...]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    attrs: dict[str, tuple[int, tuple[Ref, ...]]] = field(default_factory=dict)
    # attribute name -> every `self.<attr> = value` in any method
    self_assigns: dict[str, list[WrapperAssign]] = field(default_factory=dict)
    # attributes that `__getattr__` forwards unknown names to
    getattr_forwards: tuple[str, ...] = ()


@dataclass
class ModuleSummary:
    path: str
    # every binding of a module-level name: classes and functions as Ref("class"/"function")
    names: dict[str, list[Ref]] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    entry_classes: tuple[str, ...] = ()


def summarize(tree: ast.Module, source: str, path: str) -> ModuleSummary:
    """Summarise a parsed module. `source` is used for exact annotation/default text."""
    mod = ModuleSummary(path=path)
    _Summarizer(mod, source).module(tree)
    return mod


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Body:
    """A function's statements, walked once; its local scope, built only if asked for."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef):
        self.fn = fn
        self.stmts = walk_local(fn.body)
        self._scope: Scope | None = None

    @property
    def scope(self) -> Scope:
        if self._scope is None:
            self._scope = Scope(self.fn, self.stmts)
        return self._scope


class _Summarizer:
    def __init__(self, mod: ModuleSummary, source: str):
        self.mod = mod
        self.lines = SourceLines(source)

    # -- expressions -> refs -------------------------------------------------
    @staticmethod
    def refs(node: ast.AST, scope: Scope | None) -> list[Ref]:
        return expression_refs(node, scope)

    # -- statements ----------------------------------------------------------
    def module(self, tree: ast.Module) -> None:
        for node in walk_local(tree.body):
            self.toplevel(node)
            if isinstance(node, ast.ClassDef):
                self.classdef(node, prefix="")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.mod.functions[node.name] = self.function(node, _Body(node))

    def bind(self, name: str, ref: Ref) -> None:
        self.mod.names.setdefault(name, []).append(ref)

    def toplevel(self, node: ast.AST) -> None:
        """Module-level bindings, also inside if/try/with blocks (import fallbacks)."""
        if isinstance(node, ast.ClassDef):
            self.bind(node.name, Ref("class", node.name))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(node.name, Ref("function", node.name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, ref in import_bindings(node):
                self.bind(local, ref)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    for ref in self.refs(node.value, None):
                        self.bind(target.id, ref)
                    if target.id == "EntryClass":
                        self.mod.entry_classes = self.entry_names(node.value)

    @staticmethod
    def entry_names(value: ast.AST) -> tuple[str, ...]:
        elts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        return tuple(d for d in (_dotted(e) for e in elts) if d)

    def classdef(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        info = ClassInfo(
            name=qualname,
            line=node.lineno,
            column=node.col_offset + 1,
            end_line=node.end_lineno or node.lineno,
            bases=tuple(r for b in node.bases for r in self.refs(b, None)),
        )
        self.mod.classes[qualname] = info
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = _Body(stmt)
                fn = self.function(stmt, body)
                info.methods[stmt.name] = fn
                self.self_assigns(body, info)
                if stmt.name == "__getattr__":
                    info.getattr_forwards = _getattr_targets(stmt)
            elif isinstance(stmt, ast.ClassDef):
                self.classdef(stmt, prefix=f"{qualname}.")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        info.attrs[target.id] = (stmt.lineno, tuple(self.refs(stmt.value, None)))

    def self_assigns(self, body: _Body, info: ClassInfo) -> None:
        for node in body.stmts:
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, ast.AnnAssign):
                pairs = [(node.target, node.value if node.value is not None else node.annotation)]
            else:
                continue
            for target, value in pairs:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    values = self.refs(value, body.scope)
                    if isinstance(node, ast.AnnAssign) and node.value is not None:
                        # `self.lm: Cls = make()` -- the annotation names a candidate too
                        values += [Ref("call", args=(r,)) for r in self.refs(node.annotation, None)]
                    if isinstance(node, ast.AnnAssign) and node.value is None:
                        values = [Ref("call", args=(r,)) for r in values]
                    info.self_assigns.setdefault(target.attr, []).append(
                        WrapperAssign(node.lineno, tuple(values[:MAX_EXPANSION]))
                    )

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, body: _Body) -> FunctionInfo:
        params, names = self.params(fn.args)
        if fn.returns is not None:
            names |= free_names(fn.returns)
        returns: list[Ref] = []
        returns_value = False
        for ret in body.stmts:
            if isinstance(ret, ast.Return) and ret.value is not None and not (
                isinstance(ret.value, ast.Constant) and ret.value.value is None
            ):
                returns_value = True
                returns.extend(self.refs(ret.value, body.scope))
        return FunctionInfo(
            name=fn.name,
            line=fn.lineno,
            params=params,
            returns_value=returns_value,
            returns=tuple(returns[:MAX_EXPANSION]),
            decorators=tuple(self.lines.segment(d) or "" for d in fn.decorator_list),
            return_annotation=self.lines.segment(fn.returns),
            is_async=isinstance(fn, ast.AsyncFunctionDef),
            signature_names=tuple(sorted(names)),
        )

    def params(self, a: ast.arguments) -> tuple[tuple[Param, ...], set[str]]:
        out: list[Param] = []
        names: set[str] = set()
        positional = [*a.posonlyargs, *a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            kind = "posonly" if i < len(a.posonlyargs) else "pos"
            out.append(self.param(arg, kind, default, names))
        if a.vararg is not None:
            out.append(self.param(a.vararg, "vararg", None, names))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            out.append(self.param(arg, "kwonly", default, names))
        if a.kwarg is not None:
            out.append(self.param(a.kwarg, "varkw", None, names))
        return tuple(out), names

    def param(self, arg: ast.arg, kind: str, default: ast.expr | None, names: set[str]) -> Param:
        for node in (arg.annotation, default):
            if node is not None:
                names |= free_names(node)
        return Param(arg.arg, kind, self.lines.segment(arg.annotation), self.lines.segment(default))


def free_names(node: ast.AST) -> set[str]:
    """Names an expression reads; string annotations are parsed too ("torch.Tensor")."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            with contextlib.suppress(SyntaxError, ValueError, RecursionError):
                names |= free_names(ast.parse(sub.value, mode="eval"))
    return names


def _getattr_targets(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """Attributes of self that `__getattr__` forwards to: getattr(self.X, name)."""
    params = [a.arg for a in fn.args.args]
    name_param = params[1] if len(params) > 1 else None
    found = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Attribute)
            and isinstance(node.args[0].value, ast.Name)
            and node.args[0].value.id == "self"
            and isinstance(node.args[1], ast.Name)
            and node.args[1].id == name_param
        ):
            found.append(node.args[0].attr)
    return tuple(found)
