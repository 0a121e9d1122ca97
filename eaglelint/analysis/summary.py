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

from .class_body import class_statements, dotted, late_members, returns_argument_unchanged, star_module
from .exprs import MAX_EXPANSION, expression_refs
from .forwarding import Node, compile_getattr, string_set
from .method_facts import only_raises_not_implemented, super_calls
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
    keeps_argument: bool = False  # returns its first argument untouched (a harmless class decorator)
    super_calls: tuple[Ref, ...] = ()  # `super().m(...)` / `Base.m(self, ...)`: what each passes (exprs.py)
    abstract: bool = False  # its body only raises NotImplementedError


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
    # what `__getattr__` does with each name (forwarding.py), None without one
    getattr_forwards: Node | None = None
    decorators: tuple[str, ...] = ()
    header_keywords: bool = False  # `class W(Base, metaclass=M)`: a fix cannot append a base there
    body_line: int = 0  # first line of its first body statement (its decorators'): where a fix finds the indent


@dataclass
class ModuleSummary:
    path: str
    # every binding of a module-level name: classes and functions as Ref("class"/"function")
    names: dict[str, list[Ref]] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    entry_classes: tuple[str, ...] = ()
    star_imports: tuple[str, ...] = ()  # modules of `from m import *`, in order
    all_names: tuple[str, ...] | None = None  # a literal `__all__`
    # class name -> (line, how) for members added after its body: `setattr(C, ...)`, `C.x = ...`
    late_members: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return decorators[0].lineno if decorators else stmt.lineno


def summarize(tree: ast.Module, source: str, path: str) -> ModuleSummary:
    """Summarise a parsed module. `source` is used for exact annotation/default text."""
    mod = ModuleSummary(path=path)
    _Summarizer(mod, source).module(tree)
    return mod


class _Body:
    """A function's statements, walked once; its local scope, built only if asked for."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str = ""):
        self.fn, self.where = fn, where
        self.stmts = walk_local(fn.body)
        self._scope: Scope | None = None

    @property
    def scope(self) -> Scope:
        if self._scope is None:
            self._scope = Scope(self.fn, self.stmts, self.where)
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
        self.constants = {t.id: v for n in tree.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)
                          for v in [string_set(n.value)] if v is not None}
        stmts = walk_local(tree.body)
        self.mod.late_members = late_members(stmts)
        for node in stmts:
            self.toplevel(node)
            if isinstance(node, ast.ClassDef):
                self.classdef(node, prefix="")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.mod.functions[node.name] = self.function(node, _Body(node, node.name))

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
            star = star_module(node)
            if star is not None:
                self.mod.star_imports += (star,)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    names = string_set(node.value)
                    self.mod.all_names = tuple(sorted(names)) if names is not None else None
                if isinstance(target, ast.Name):
                    for ref in self.refs(node.value, None):
                        self.bind(target.id, ref)
                    if target.id == "EntryClass":
                        self.mod.entry_classes = self.entry_names(node.value)

    @staticmethod
    def entry_names(value: ast.AST) -> tuple[str, ...]:
        elts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        return tuple(d for d in (dotted(e) for e in elts) if d)

    def classdef(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        info = ClassInfo(
            name=qualname,
            line=node.lineno,
            column=node.col_offset + 1,
            end_line=node.end_lineno or node.lineno,
            # `Base[Cfg]`, `Generic[T]`: the class is the subscripted one
            bases=tuple(r for b in node.bases for r in self.refs(b.value if isinstance(b, ast.Subscript) else b,
                                                                  None)),
            decorators=tuple(self.lines.segment(d) or "" for d in node.decorator_list),
            header_keywords=bool(node.keywords),
            body_line=_first_line(node.body[0]),
        )
        self.mod.classes[qualname] = info
        stmts = class_statements(node.body)  # also under class-body if/else/try/with, not TYPE_CHECKING
        constants = dict(self.constants)
        getattr_fn = None
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = _Body(stmt, f"{qualname}.{stmt.name}")
                fn = self.function(stmt, body)
                info.methods[stmt.name] = fn
                self.self_assigns(body, info)
                if stmt.name == "__getattr__":
                    getattr_fn = stmt
            elif isinstance(stmt, ast.ClassDef):
                self.classdef(stmt, prefix=f"{qualname}.")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for name, value in _targets(target, stmt.value):
                        if not isinstance(name, ast.Name):
                            continue
                        info.attrs[name.id] = (stmt.lineno, tuple(self.refs(value, None)) if value else ())
                        if value is not None and string_set(value) is not None:
                            constants[name.id] = string_set(value)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for local, ref in import_bindings(stmt):
                    info.attrs[local] = (stmt.lineno, (ref,))
        if getattr_fn is not None:
            info.getattr_forwards = compile_getattr(getattr_fn, constants)

    def self_assigns(self, body: _Body, info: ClassInfo) -> None:
        for node in body.stmts:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not any(
                    a.arg == "self" for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]):
                # a closure defined in the method: its `self` is the method's
                inner = _Body(node)
                for name, bound in body.scope.exprs.items():
                    inner.scope.exprs.setdefault(name, bound)
                self.self_assigns(inner, info)
                continue
            if isinstance(node, ast.Assign):
                pairs = [pair for t in node.targets for pair in _targets(t, node.value)]
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
                    values = self.refs(value, body.scope) if value is not None else [
                        Ref("unknown", f"line {node.lineno}: unpacked from a value eaglelint cannot split")]
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
            keeps_argument=self.keeps_argument(fn, body),
            super_calls=super_calls(fn.name, body.stmts, lambda: body.scope), abstract=only_raises_not_implemented(fn),
        )

    def keeps_argument(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, body: _Body) -> bool:
        """returns_argument_unchanged(fn), without walking every expression of the function
        where the answer is plainly no (most methods; the walk was a fifth of summarising):
        one of its own statements returns something else than its first parameter, or its
        text has no `return` at all (a nested function's return is in that text too)."""
        params = [*fn.args.posonlyargs, *fn.args.args]
        if not params:
            return False
        first = params[0].arg
        if any(isinstance(s, ast.Return) and not (isinstance(s.value, ast.Name) and s.value.id == first)
               for s in body.stmts):
            return False
        text = self.lines.segment(fn)
        if text is not None and "return" not in text:
            return False
        return returns_argument_unchanged(fn)

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


def free_names_of_text(text: str, value: bool = False) -> set[str]:
    """Names an annotation (strings in it too: forward references) or, with `value`, a
    default value reads; {"<unparsable>"} for text that is not an expression."""
    try:
        node = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if value else free_names(node)


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


def _targets(target: ast.AST, value: ast.AST | None) -> list[tuple]:
    """(target, value) pairs of one assignment target; a tuple target is paired element by
    element with a literal tuple of the same length, else each element gets None (unknown)."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [(target, value)]
    elts = target.elts
    values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elts) and not any(
        isinstance(e, ast.Starred) for e in [*elts, *value.elts]) else [None] * len(elts)
    return [pair for t, v in zip(elts, values, strict=True) for pair in _targets(t, v)]
