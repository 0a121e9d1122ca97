"""Cross-module resolution: what a symbolic `Ref` denotes, and which methods a class has.

Why a small evaluator of its own: the questions are narrow (which class does
`self.language_model` hold, which bases does a class have, where is a method
defined) and must be answered without importing the scanned code. Every answer is
either a concrete class/function/module or an `Unknown` that says why, so the checker
can report "could not resolve" instead of guessing or going silent.
"""

from __future__ import annotations

import ast
import builtins
import os
from pathlib import Path
from typing import Any

from ..syntax.refs import Ref
from .calls import HOOKS
from .entities import (  # re-exported: what resolve() returns
    ClassEntity as ClassEntity,
)
from .entities import (
    Entity as Entity,
)
from .entities import (
    FunctionEntity as FunctionEntity,
)
from .entities import (
    InstanceEntity as InstanceEntity,
)
from .entities import (
    Member as Member,
)
from .entities import (
    ModuleEntity as ModuleEntity,
)
from .entities import (
    SeqEntity as SeqEntity,
)
from .entities import (
    Unknown as Unknown,
)
from .exprs import expression_refs
from .method_facts import CONSTRUCTOR
from .project import Project
from .summary import ClassInfo, FunctionInfo, LazyClasses, ModuleSummary, Param, WrapperAssign

MAX_DEPTH = 24


class Resolver:
    def __init__(self, project: Project) -> None:
        self.project = project
        self.hooks = HOOKS  # what the engines' calls build (calls.py)
        self._memo: dict[tuple, list[Entity]] = {}
        self._mro: dict[ClassEntity, list[ClassEntity]] = {}
        self._modules: dict[str, ModuleSummary | None] = {}
        self._located: dict[tuple[str, str], Path | None] = {}  # (importing file, module) -> its file
        # memos of the analyses built on this resolver, keyed by their name: they live and
        # are renewed with it (after an internal error, a half-made answer must not stay)
        self.memos: dict[str, Any] = {}

    # -- lookups -----------------------------------------------------------
    def module(self, path: str) -> ModuleSummary | None:
        if path not in self._modules:
            self._modules[path] = self.project.summary(path)
        return self._modules[path]

    def module_of(self, cls: ClassEntity) -> ModuleSummary:
        """The summary of the module that defines a class the resolver found: it read the
        module to find the class, so the module was summarised (LookupError otherwise)."""
        mod = self.module(cls.path)
        if mod is None:
            raise LookupError(f"{cls.qualname}: {cls.path} has no summary")
        return mod

    def info(self, cls: ClassEntity) -> ClassInfo:
        return self.module_of(cls).classes[cls.qualname]

    def _lazy(self, cls: ClassEntity) -> LazyClasses | None:
        mod = self.module(cls.path)
        return mod.classes if mod is not None and isinstance(mod.classes, LazyClasses) else None

    def may_bind(self, cls: ClassEntity, word: str) -> bool:
        """False only where cls, not parsed yet, cannot bind `word` in its body or on `self` (its
        text lacks it: summary.py `LazyClasses.may_bind`); its info is then not needed to know."""
        lazy = self._lazy(cls)
        return lazy is None or lazy.may_bind(cls.qualname, word)

    def assigns(self, cls: ClassEntity, name: str) -> list[WrapperAssign]:
        """`info(cls).self_assigns.get(name, [])`, without parsing a class whose text lacks the name."""
        return self.info(cls).self_assigns.get(name, []) if self.may_bind(cls, name) else []

    def defines(self, cls: ClassEntity, method: str) -> bool:
        """`method in info(cls).methods`, without parsing a class whose text has no `def <method>`."""
        lazy = self._lazy(cls)
        if lazy is not None and not lazy.may_define(cls.qualname, method):
            return False
        return method in self.info(cls).methods

    def decorators(self, cls: ClassEntity) -> tuple[str, ...]:
        """`info(cls).decorators`; a class not parsed yet has none (a decorated class is parsed
        with its module: summary.py `class_chunks`)."""
        lazy = self._lazy(cls)
        if lazy is not None and lazy.header_bases(cls.qualname) is not None:
            return ()
        return self.info(cls).decorators

    def base_refs(self, cls: ClassEntity) -> tuple[Ref, ...]:
        """cls's `ClassInfo.bases`, from its header alone while it is not parsed."""
        lazy = self._lazy(cls)
        found = lazy.header_bases(cls.qualname) if lazy is not None else None
        return found if found is not None else self.info(cls).bases

    def evaluate(self, ref: Ref, path: str, owner: ClassEntity | None = None, depth: int = 0) -> list[Entity]:
        key = (ref, path, owner)
        if key in self._memo:
            return self._memo[key]
        if depth > MAX_DEPTH:
            return [Unknown("resolution too deep (cycle?)")]
        self._memo[key] = [Unknown("circular definition")]
        result = _dedupe(self._evaluate(ref, path, owner, depth + 1))
        self._memo[key] = result
        return result

    def _evaluate(self, ref: Ref, path: str, owner: ClassEntity | None, depth: int) -> list[Entity]:
        kind = ref.kind
        if kind == "name":
            return self.lookup(path, ref.name, depth)
        if kind == "import":
            return self._import(ref, path, depth)
        if kind == "attr":
            bases = self.evaluate(ref.args[0], path, owner, depth)
            return [m for base in bases for m in self.member(base, ref.name, depth)]
        if kind == "call":  # a call Ref with a name is one an engine's hook read (calls.py)
            found = self.hooks.evaluate(self, ref, path, owner, depth) if ref.name else None
            if found is not None:
                return found
            return [r for f in self.evaluate(ref.args[0], path, owner, depth) for r in self._call(f, depth)]
        if kind == "item":
            return self._item(ref, path, owner, depth)
        if kind == "seq":
            return [SeqEntity(path, owner, ref.args)]
        if kind == "self":
            if owner is None:
                return [Unknown(f"self.{ref.name} outside a class")]
            return self._self_attr(owner, ref.name, depth)
        if kind == "const":
            return []
        if kind == "param":
            return self._parameter(ref, path, owner, depth)
        found = self.hooks.evaluate(self, ref, path, owner, depth)  # a kind of Ref a hook made
        if found is not None:
            return found
        return [Unknown(ref.name or "expression eaglelint cannot follow")]

    def _parameter(self, ref: Ref, path: str, owner: ClassEntity | None, depth: int) -> list[Entity]:
        """What a constructor parameter holds in an instance of `owner`: what the nearest
        subclass `__init__` passes up for it, else its default. Parameters of other functions
        (their callers pass what they like) stay unknown.

        Why the default: the engine's loader builds a served model as `model_class(config=...,
        quant_config=...)` (SGLang's model_loader/loader.py `_initialize_model`), so a
        constructor parameter it does not pass takes its default (`language_model_cls=
        Qwen3LLMModel`), unless a subclass's `__init__` passes another; followed per class
        `self` stands for, so that each subclass gets its own verdict."""
        unknown: list[Entity] = [Unknown(f"parameter '{ref.name}'")]
        cls_name, _, method = ref.attr.rpartition(".")
        mod = self.module(path)
        if method != CONSTRUCTOR or mod is None or cls_name not in mod.classes:
            return unknown
        definer = ClassEntity(path, cls_name)
        fn = mod.classes[cls_name].methods.get(CONSTRUCTOR)
        param = next((p for p in fn.params if p.name == ref.name), None) if fn else None
        if fn is None or param is None or param.kind in ("vararg", "varkw"):
            return unknown
        mro = self.mro(owner) if owner is not None else []
        callers = [c for c in mro[:mro.index(definer)] if CONSTRUCTOR in self.info(c).methods] \
            if definer in mro else []
        if callers:
            caller = callers[-1]  # its super().__init__ reaches the definer's
            passed = self._passed(caller, definer, fn, param)
            if passed:
                return [e for r in passed for e in self.evaluate(r, caller.path, owner, depth)]
        if param.default is None:
            return unknown
        try:
            default = expression_refs(ast.parse(param.default.strip(), mode="eval").body, None)
        except (SyntaxError, RecursionError):
            return unknown
        return [e for r in default for e in self.evaluate(r, path, None, depth)]

    def _passed(self, caller: ClassEntity, definer: ClassEntity, fn: FunctionInfo, param: Param) -> list[Ref]:
        """The values caller's `__init__` passes for `param` to the definer's, by keyword or
        position; none where it does not pass it (a starred argument forwards what the
        loader passed, which never includes such a parameter)."""
        positional = [p.name for p in fn.params if p.kind in ("posonly", "pos")][1:]  # after self
        out: list[Ref] = []
        for call in self.info(caller).methods[CONSTRUCTOR].super_calls:
            if call.name != CONSTRUCTOR:
                continue
            args = list(call.args)
            if args and args[0].kind == "target":
                bases = [e for r in args.pop(0).args for e in self.evaluate(r, caller.path, None)]
                if not any(isinstance(b, ClassEntity) and definer in self.mro(b) for b in bases):
                    continue  # `nn.Module.__init__(self)` beside `Base.__init__(self, ...)`
            for arg in args:
                by_position = arg.name.isdigit() and int(arg.name) < len(positional) \
                    and positional[int(arg.name)] == param.name
                if by_position or (arg.name == param.name and param.kind != "posonly"):
                    out.extend(arg.args)
        return out

    def _item(self, ref: Ref, path: str, owner: ClassEntity | None, depth: int) -> list[Entity]:
        """An item of a literal container: each of its items."""
        out: list[Entity] = []
        for seq in self.evaluate(ref.args[0], path, owner, depth):
            if isinstance(seq, SeqEntity):
                for item in seq.items:
                    out.extend(self.evaluate(item, seq.path, seq.owner, depth))
            elif isinstance(seq, Unknown):
                out.append(seq)
            else:
                out.append(Unknown("subscript of something that is not a literal container"))
        return out

    def unparsable(self, path: str) -> Unknown:
        why = self.project.errors.get(Path(os.path.abspath(path)), "")
        return Unknown(f"{Path(path).name} cannot be parsed{': ' + why if why else ''}")

    def lookup(self, path: str, name: str, depth: int = 0) -> list[Entity]:
        mod = self.module(path)
        if mod is None:
            return [self.unparsable(path)]
        bindings = mod.names.get(name)
        if not bindings:
            starred = self._star(mod, name, depth)
            if starred is not None:
                return starred
            if hasattr(builtins, name):
                return [Unknown(f"builtin {name}")]
            return [Unknown(f"'{name}' is not defined in {Path(path).name}")]
        out: list[Entity] = []
        for ref in bindings:
            if ref.kind == "class":
                out.append(ClassEntity(path, ref.name))
            elif ref.kind == "function":
                out.append(FunctionEntity(path, ref.name))
            else:
                out.extend(self.evaluate(ref, path, None, depth))
        return out

    def _star(self, mod: ModuleSummary, name: str, depth: int) -> list[Entity] | None:
        """`name` as a `from m import *` of `mod` binds it (the last such import wins, as
        at run time): what m exports is its `__all__`, else its public names."""
        if depth > MAX_DEPTH:
            return [Unknown("star imports nested too deeply (cycle?)")]
        for spelled in reversed(mod.star_imports):
            location = self.project.resolve_module(spelled, Path(mod.path))
            if location is None:
                return [Unknown(f"'{name}' may come from `from {spelled} import *`, outside the scanned tree")]
            if location.suffix != ".py":
                continue  # a namespace package's star import binds no submodule
            source = self.module(str(location))
            if source is None:
                return [self.unparsable(str(location))]
            exported = name in source.all_names if source.all_names is not None else not name.startswith("_")
            if exported and (name in source.names or self._star(source, name, depth + 1)):
                return self.lookup(str(location), name, depth + 1)
        return None

    def _import(self, ref: Ref, path: str, depth: int) -> list[Entity]:
        key = (path, ref.name)
        if key not in self._located:  # the project's lookup makes two Paths each time
            self._located[key] = self.project.resolve_module(ref.name, Path(path))
        location = self._located[key]
        if location is None:
            return [Unknown(f"module {ref.name} is outside the scanned tree")]
        module = ModuleEntity(location)
        return self.member(module, ref.attr, depth) if ref.attr else [module]

    def member(self, base: Entity, name: str, depth: int = 0) -> list[Entity]:
        if isinstance(base, Unknown):
            return [base]
        if isinstance(base, ModuleEntity):
            loc = base.location
            if loc.suffix == ".py":
                mod = self.module(str(loc))
                if mod is None:
                    return [self.unparsable(str(loc))]
                if name in mod.names or self._star(mod, name, depth):
                    return self.lookup(str(loc), name, depth)
            sub = self.project.submodule(loc, name)
            if sub is not None:
                return [ModuleEntity(sub)]
            return [Unknown(f"{loc.name} has no '{name}'")]
        if isinstance(base, (ClassEntity, InstanceEntity)):
            cls = base.cls if isinstance(base, InstanceEntity) else base
            found = self.find_member(cls, name)
            if found is None:
                nested = f"{cls.qualname}.{name}"
                mod = self.module(cls.path)
                if mod is not None and nested in mod.classes:
                    return [ClassEntity(cls.path, nested)]
                if isinstance(base, InstanceEntity):  # an instance's attribute: what its methods set on self
                    held = self._instance_attr(cls, name, depth)
                    if held is not None:
                        return held
                return [Unknown(f"{cls.qualname} has no '{name}'")]
            if found.function is not None:
                return [FunctionEntity(found.owner.path, name, found.owner.qualname, cls)]
            _, refs = self.info(found.owner).attrs[name]
            return [e for r in refs for e in self.evaluate(r, found.owner.path, cls, depth)]
        return [Unknown(f"attribute '{name}' of a {type(base).__name__}")]

    def _call(self, callee: Entity, depth: int) -> list[Entity]:
        if isinstance(callee, ClassEntity):
            return [InstanceEntity(callee)]
        if isinstance(callee, FunctionEntity):
            fn = self.function(callee)
            if fn is None:
                return [Unknown(f"cannot read {callee.name}")]
            if not fn.returns:  # an abstract builder: the class calling it never exists
                return [] if fn.abstract else [Unknown(f"{callee.name}() returns nothing eaglelint can follow")]
            return [e for r in fn.returns for e in self.evaluate(r, callee.path, callee.bound, depth)]
        if isinstance(callee, Unknown):
            return [callee]
        return [Unknown(f"call of a {type(callee).__name__}")]

    def function(self, fn: FunctionEntity) -> FunctionInfo | None:
        mod = self.module(fn.path)
        if mod is None:
            return None
        if fn.defined_in is None:
            return mod.functions.get(fn.name)
        return mod.classes[fn.defined_in].methods.get(fn.name)

    def _instance_attr(self, cls: ClassEntity, name: str, depth: int) -> list[Entity] | None:
        """`obj.<name>` of an instance of cls that no class body binds: the values its methods
        assign to `self.<name>`, the first such class up the MRO; None where none does."""
        for c in self.mro(cls):
            assigns = self.assigns(c, name)
            if assigns:
                return [e for a in assigns for v in a.values for e in self.evaluate(v, c.path, cls, depth)]
        return None

    def _self_attr(self, owner: ClassEntity, name: str, depth: int) -> list[Entity]:
        if self.find_member(owner, name) is not None:
            return self.member(owner, name, depth)
        for cls in self.mro(owner):
            assigns = self.assigns(cls, name)
            if assigns:
                return [e for a in assigns for v in a.values for e in self.evaluate(v, cls.path, owner, depth)]
        return [Unknown(f"self.{name} is never assigned in {owner.qualname}")]

    # -- classes -----------------------------------------------------------
    def bases(self, cls: ClassEntity) -> tuple[list[ClassEntity], list[str]]:
        """Resolved base classes, and the reasons for the ones that stay opaque."""
        resolved: list[ClassEntity] = []
        opaque: list[str] = []
        for ref in self.base_refs(cls):
            for ent in self.evaluate(ref, cls.path, None):
                if isinstance(ent, ClassEntity):
                    if ent != cls and ent not in resolved:
                        resolved.append(ent)
                elif isinstance(ent, Unknown):
                    opaque.append(ent.reason)
        return resolved, opaque

    def mro(self, cls: ClassEntity) -> list[ClassEntity]:
        """C3 linearisation over the bases eaglelint can see (opaque bases dropped).

        Bases first, from an explicit stack: a chain of thousands of classes must not
        overflow Python's. A base still open (an inheritance cycle through imports)
        stands for itself alone.
        """
        stack, open_ = [cls], set()
        while stack:
            c = stack[-1]
            if c in self._mro:
                stack.pop()
                continue
            bases, _ = self.bases(c)
            todo = [b for b in bases if b not in self._mro and b not in open_]
            if todo and c not in open_:
                open_.add(c)
                stack.extend(reversed(todo))
                continue
            self._mro[c] = [c] + _c3([self._mro.get(b, [b]) for b in bases] + [bases])
            open_.discard(c)
            stack.pop()
        return self._mro[cls]

    def find_member(self, cls: ClassEntity, name: str) -> Member | None:
        for c in self.mro(cls):
            if not self.may_bind(c, name):
                continue
            info = self.info(c)
            if name in info.methods:
                return Member(c, info.methods[name].line, info.methods[name])
            if name in info.attrs:
                return Member(c, info.attrs[name][0], None)
        return None


def _c3(seqs: list[list[ClassEntity]]) -> list[ClassEntity]:
    seqs = [list(s) for s in seqs if s]
    if len(seqs) == 2 and seqs[1] == seqs[0][:1]:
        return seqs[0]  # one base: its MRO (the merge below is quadratic in the chain's length)
    out: list[ClassEntity] = []
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in s[1:] for s in seqs):
                break
        else:  # inconsistent hierarchy: fall back to depth-first order
            head = seqs[0][0]
        out.append(head)
        seqs = [[c for c in s if c != head] for s in seqs]
        seqs = [s for s in seqs if s]
    return out


def _dedupe(entities: list[Entity]) -> list[Entity]:
    seen: set = set()
    out = []
    for e in entities:
        if e not in seen:
            seen.add(e)
            out.append(e)
    return out
