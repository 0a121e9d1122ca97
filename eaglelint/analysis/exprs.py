"""An expression as the symbolic Refs it may denote, bounded in depth and in work.

Why bounded: a Ref as deep as its expression (`x.a.a.a...`, hundreds of levels, which
`ast.parse` accepts) overflows the stack wherever it is later hashed or compared, and
function locals that each use the previous one twice (`a2 = a1 if c else a1`) cost
2**n to expand. Past the bounds the answer is an `unknown` Ref that says why, and
the wrapped class is reported as unresolved instead of crashing or hanging the run.
"""

from __future__ import annotations

import ast

from .refs import Ref
from .scope import Scope

MAX_EXPANSION = 64  # refs kept for one local name
MAX_REF_DEPTH = 64  # nesting of one expression that is followed
MAX_REF_WORK = 5000  # expression nodes visited for one value
REGISTRY_LOOKUP = "resolve_model_cls"  # SGLang's ModelRegistry: architecture name -> EntryClass class

# vLLM's model loaders: the class they build is named by their arguments (through
# vllm/model_executor/models/registry.py), so a call to one keeps those arguments as
# `kw` Refs after the callee, and the call Ref is named after the loader
# (vllm_registry.py evaluates it). Name -> its positional parameters.
VLLM_LOADERS = {
    "init_vllm_registered_model": ("vllm_config",),
    "initialize_model": ("vllm_config",),
    "with_hf_config": ("hf_config", "architectures"),
}
VLLM_LOADER_ARGUMENTS = ("vllm_config", "hf_config", "architectures", "model_class")


def expression_refs(node: ast.AST, scope: Scope | None) -> list[Ref]:
    """Refs for an expression; local names are substituted from `scope` when given."""
    return _Refs(scope).of(node, frozenset(), 0)


class _Refs:
    def __init__(self, scope: Scope | None):
        self.scope = scope
        self.work = 0
        self.strings = False  # inside a loader's arguments: keep string constants whole

    def of(self, node: ast.AST, seen: frozenset, depth: int) -> list[Ref]:
        if isinstance(node, Ref):
            return [node]
        self.work += 1
        if depth > MAX_REF_DEPTH or self.work > MAX_REF_WORK:
            return [Ref("unknown", f"expression at line {getattr(node, 'lineno', '?')} is too deep to follow")]

        def sub(child: ast.AST, names: frozenset = seen) -> list[Ref]:
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

    def loader_arguments(self, node: ast.Call, loader: str, sub) -> list[Ref]:
        """`kw` Refs for the arguments of a vLLM loader call that choose the class it builds."""
        named = [*zip(VLLM_LOADERS[loader], node.args, strict=False),
                 *((k.arg, k.value) for k in node.keywords if k.arg in VLLM_LOADER_ARGUMENTS)]
        out = []
        for name, value in named:
            strings, self.strings = self.strings, True
            try:
                out.append(Ref("kw", name, args=tuple(sub(value))))
            finally:
                self.strings = strings
        return out

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
        """`d.get(k)` reads an item of `d`; SGLang's registry lookup and vLLM's loaders keep
        what names the class they build; any other call is a call of what `func` refers to."""
        func = node.func

        def sub(n: ast.AST) -> list[Ref]:
            return self.of(n, seen, depth + 1)

        if isinstance(func, ast.Attribute) and func.attr == "get" and node.args:
            return [Ref("item", args=(b,)) for b in sub(func.value)]
        if isinstance(func, ast.Attribute) and func.attr == REGISTRY_LOOKUP:
            return [_registry(node, self.scope)]
        loader = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if loader in VLLM_LOADERS:
            return [Ref("call", loader, args=(c, *self.loader_arguments(node, loader, sub))) for c in sub(func)]
        return [Ref("call", args=(c,)) for c in sub(func)]


def _registry(call: ast.Call, scope: Scope | None) -> Ref:
    """`ModelRegistry.resolve_model_cls(arch)`, which returns `(model class, arch)`: a
    literal architecture name (or list of them, tried in order) is a `registry` Ref the
    resolver looks up among the registered classes; any other is decided at load time, by
    the config: a `registry` Ref without a name (any registered text model), whose `attr`
    says what chooses."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "architectures"), None)
    names = [] if arg is None else list(arg.elts) if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
    literal = [n.value for n in names if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if names and len(literal) == len(names):
        return Ref("registry", ",".join(literal))
    text = ast.unparse(arg)[:60] if arg is not None else "no architecture"
    params = [n for n, bound in (scope.exprs.items() if scope else ()) if any(
        isinstance(b, Ref) and b.kind == "param" for b in bound)]
    source = "the checkpoint's config" if any("config" in n for n in params) else "values known only at load time"
    return Ref("registry", "", f"chosen at load time: SGLang's ModelRegistry.{REGISTRY_LOOKUP}({text}) looks up an "
                               f"architecture name that depends on {source}")
