"""What SGLang's engine calls or reads on the model object, found in its source without running it.

Why: the interface packs under `rules/interfaces/` are a snapshot of what one SGLang
release needs. The engine keeps adding calls (`set_dflash_layers_to_capture`,
`get_embed_and_head_for_draft`, ...); scanning the engine itself lets a fork's CI
notice a new name the day it appears, instead of when a server dies at launch.

"The model object" is recognised by shape, as data in `rules/engine.toml`: an
`X.model` where X is a model runner (`model_runner.model`,
`self.target_worker.model_runner.model`, `self.draft_runner_list[i].model`),
`self.model` inside a `*ModelRunner` class, parameters named like `target_model`
in the engine's core folders, and local names bound to any of those. A use is
*guarded* (the engine copes without it) when it is `hasattr`/`getattr(.., default)`
itself or sits under a positive `hasattr` test for the same name.

It reads SGLang's engine files (`sglang/srt/managers`, `model_executor`, ...) itself,
through `sources.read_source`, not through analysis/python/project.py: they are the engine's
code, scanned once for call sites, never files of the checked tree that a rule
summarises or a fix writes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.syntax.sources import SourceError, parse_source, read_source
from ..packs import RulesError, load_toml, rules_dir


@dataclass(frozen=True)
class ScanRules:
    roots: tuple[str, ...]
    exclude: tuple[str, ...]
    param_roots: tuple[str, ...]
    model_params: frozenset[str]
    runner_pattern: re.Pattern
    runner_class_pattern: re.Pattern
    ignore: dict[str, str]  # generic torch.nn.Module names -> why left out
    known: dict[str, str]  # engine names no pack checks -> why


@dataclass(frozen=True)
class Site:
    path: str  # relative to the scanned root, with forward slashes
    line: int
    how: str  # call | read | hasattr | getattr | isinstance
    guarded: bool
    on: str  # target | draft | any: which model, as far as the expression's names tell


@dataclass
class EngineName:
    name: str
    sites: list[Site] = field(default_factory=list)

    @property
    def required(self) -> bool:
        return any(not s.guarded for s in self.sites)

    @property
    def on(self) -> str:
        roles = {s.on for s in self.sites}
        return roles.pop() if len(roles) == 1 else "any"


@dataclass
class EngineScan:
    root: Path
    version: str | None
    names: dict[str, EngineName] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    files: int = 0


def load_scan_rules() -> ScanRules:
    path = rules_dir() / "engine.toml"
    data = load_toml(path)
    try:
        return ScanRules(
            roots=tuple(data["roots"]), exclude=tuple(data["exclude"]), param_roots=tuple(data["param_roots"]),
            model_params=frozenset(data["model_params"]),
            runner_pattern=re.compile(data["runner_pattern"]),
            runner_class_pattern=re.compile(data["runner_class_pattern"]),
            ignore={n: group["why"] for group in data["ignore"] for n in group["names"]},
            known={n: group["why"] for group in data["known"] for n in group["names"]},
        )
    except (KeyError, TypeError, re.error) as exc:
        raise RulesError(f"{path}: missing or bad key {exc}") from None


def scan_engine(root: Path, rules: ScanRules, version: str | None = None) -> EngineScan:
    """Every name used on the model object under `root` (the folder holding `sglang/`)."""
    scan = EngineScan(root, version)
    for top in rules.roots:
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(rel == ex or rel.startswith(ex.rstrip("/") + "/") for ex in rules.exclude):
                continue
            try:
                raw = read_source(path)
            except SourceError as exc:
                scan.errors.append((rel, str(exc)))
                continue
            scan.files += 1
            if b".model" not in raw.raw and not any(p.encode() in raw.raw for p in rules.model_params):
                continue
            try:
                tree = parse_source(raw)
            except SourceError as exc:
                scan.errors.append((rel, str(exc)))
                continue
            params = any(rel.startswith(p.rstrip("/") + "/") for p in rules.param_roots)
            try:
                _FileScan(rel, rules, params, scan.names, _protocols(tree)).block(tree.body, _Ctx({}, False),
                                                                                 frozenset())
            except RecursionError:
                scan.errors.append((rel, "code is nested too deeply to analyse"))
    return scan


@dataclass
class _Ctx:
    params: dict[str, str]  # model-object names bound in enclosing functions -> role
    runner_class: bool  # inside a *ModelRunner class: self.model is the model
    aliases: dict[str, str] = field(default_factory=dict)

    def names(self) -> dict[str, str]:
        return self.params | self.aliases


def _role(text: str) -> str:
    return "draft" if "draft" in text else "target" if "target" in text else "any"


def _terminal(node: ast.AST) -> str | None:
    """The last identifier of `a.b[i]` / `a.b()`: what the object is called."""
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _protocols(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level `class P(Protocol)`: `isinstance(model, P)` guards P's members."""
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(_terminal(b) == "Protocol" for b in node.bases):
            out[node.name] = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return out


def _exits(body: list[ast.stmt]) -> bool:
    """Leaves the enclosing block quietly (a `raise` means the name is required)."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Continue, ast.Break))


class _FileScan:
    def __init__(self, rel: str, rules: ScanRules, params: bool, names: dict[str, EngineName],
                 protocols: dict[str, set[str]]):
        self.rel, self.rules, self.params, self.names, self.protocols = rel, rules, params, names, protocols

    def record(self, name: str, node: ast.expr, how: str, guarded: bool, on: str) -> None:
        self.names.setdefault(name, EngineName(name)).sites.append(Site(self.rel, node.lineno, how, guarded, on))

    def role(self, node: ast.AST, ctx: _Ctx) -> str | None:
        """Which model `node` is (target/draft/any), or None when it is not the model object."""
        if isinstance(node, ast.Name):
            return ctx.names().get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "model":
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return "any" if ctx.runner_class else None
            term = _terminal(node.value)
            if term is not None and self.rules.runner_pattern.search(term):
                return _role(ast.unparse(node.value))
        return None

    def test(self, node: ast.AST) -> tuple[set[str], set[str]]:
        """Names a condition tests for: (present when true, present when false)."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            present, absent = self.test(node.operand)
            return absent, present
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return {n for v in node.values for n in self.test(v)[0]}, set()
        if isinstance(node, ast.NamedExpr):
            return self.test(node.value)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.left, ast.Call):
            present, absent = self.test(node.left)  # getattr(m, "x", None) is not None
            return (present, absent) if isinstance(node.ops[0], (ast.IsNot, ast.NotEq)) else (absent, present)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) >= 2:
            key = node.args[1]
            if node.func.id in ("hasattr", "getattr") and isinstance(key, ast.Constant) and isinstance(key.value, str):
                return {key.value}, set()
            if node.func.id == "isinstance" and isinstance(key, ast.Name):
                return set(self.protocols.get(key.id, ())), set()
        return set(), set()

    def block(self, body: list[ast.stmt], ctx: _Ctx, guards: frozenset[str]) -> None:
        for stmt in body:
            self.visit(stmt, ctx, guards)
            if isinstance(stmt, ast.If) and _exits(stmt.body):
                guards = guards | self.test(stmt.test)[1]  # if not hasattr(m, "x"): return

    def visit(self, node: ast.AST, ctx: _Ctx, guards: frozenset[str]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.function(node, ctx)
        elif isinstance(node, ast.ClassDef):
            self.klass(node, ctx, guards)
        elif isinstance(node, (ast.If, ast.IfExp, ast.While)):
            present, absent = self.test(node.test)
            self.visit(node.test, ctx, guards)
            self.branch(node.body, ctx, guards | present)
            self.branch(node.orelse, ctx, guards | absent)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                self.visit(value, ctx, guards)
                if isinstance(node.op, ast.And):
                    guards = guards | self.test(value)[0]
        elif isinstance(node, ast.Call):
            self.call(node, ctx, guards)
        elif isinstance(node, ast.Attribute):
            on = self.role(node.value, ctx) if isinstance(node.ctx, ast.Load) else None
            if on is not None:
                self.record(node.attr, node, "read", node.attr in guards, on)
            self.visit(node.value, ctx, guards)
        else:
            self.generic(node, ctx, guards)

    def klass(self, node: ast.ClassDef, ctx: _Ctx, guards: frozenset[str]) -> None:
        """A class body is a new context: a runner class (by name) is where the engine's roles live."""
        for child in [*node.bases, *node.keywords, *node.decorator_list]:
            self.visit(child, ctx, guards)
        runner = self.rules.runner_class_pattern.search(node.name) is not None
        self.block(node.body, _Ctx(ctx.names(), runner), frozenset())

    def generic(self, node: ast.AST, ctx: _Ctx, guards: frozenset[str]) -> None:
        """Any other node: note an alias a plain assignment makes, then visit the children."""
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            on = self.role(node.value, ctx)
            if on is not None:
                ctx.aliases[node.targets[0].id] = on
            else:
                ctx.aliases.pop(node.targets[0].id, None)
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.block(value, ctx, guards)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item, ctx, guards)
            elif isinstance(value, ast.AST) and name != "ctx":
                self.visit(value, ctx, guards)

    def branch(self, body, ctx: _Ctx, guards: frozenset[str]) -> None:
        if isinstance(body, list):
            self.block(body, ctx, guards)
        else:
            self.visit(body, ctx, guards)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, ctx: _Ctx) -> None:
        a = node.args
        for default in [*a.defaults, *a.kw_defaults, *getattr(node, "decorator_list", [])]:
            if default is not None:
                self.visit(default, ctx, frozenset())
        own = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
        params = {k: v for k, v in ctx.names().items() if k not in own}
        if self.params:
            params |= {p: _role(p) for p in own & self.rules.model_params}
        inner = _Ctx(params, ctx.runner_class)
        if isinstance(node, ast.Lambda):
            self.visit(node.body, inner, frozenset())
        else:
            self.block(node.body, inner, frozenset())

    def call(self, node: ast.Call, ctx: _Ctx, guards: frozenset[str]) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("hasattr", "getattr") and len(node.args) >= 2:
            subject, key = node.args[0], node.args[1]
            on = self.role(subject, ctx)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and on is not None:
                optional = func.id == "hasattr" or len(node.args) > 2 or key.value in guards
                self.record(key.value, node, func.id, optional, on)
        if isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2:
            on = self.role(node.args[0], ctx)
            if on is not None and isinstance(node.args[1], ast.Name):
                for name in sorted(self.protocols.get(node.args[1].id, ())):
                    self.record(name, node, "isinstance", True, on)
        if isinstance(func, ast.Attribute):
            on = self.role(func.value, ctx)
            if on is not None:
                self.record(func.attr, func, "call", func.attr in guards, on)
            self.visit(func.value, ctx, guards)
        else:
            self.visit(func, ctx, guards)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.visit(arg, ctx, guards)
