"""Classes chosen at run time, resolved where the code decides.

Why: SGLang often picks the model a class holds by a value decided when it is built:
a constructor parameter with a default (`language_model_cls=Qwen3LLMModel`, which a
subclass overrides by passing another class up through `super().__init__`), or a
lookup in SGLang's model registry by architecture name. The engine's loader builds a
served model as `model_class(config=..., quant_config=...)` (model_loader/loader.py
`_initialize_model`), so a constructor parameter it does not pass takes its default,
unless a subclass's `__init__` passes another; that binding is followed here, per
class `self` stands for, so that each subclass gets its own verdict. A name registered
with SGLang's registry is the class of that name in some module's `EntryClass`
(models/registry.py `import_model_classes` keys entries by `__name__`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .entities import ClassEntity, Entity, InstanceEntity, SeqEntity, Unknown
from .exprs import expression_refs
from .method_facts import CONSTRUCTOR
from .refs import Ref
from .served import REGISTRY_FILE, served, text_models
from .summary import FunctionInfo, Param

if TYPE_CHECKING:  # the resolver hands references here; only its type is needed
    from .resolve import Resolver


def held_classes(resolver: Resolver, cls: ClassEntity, attr: str) -> tuple[list[ClassEntity], list[str]]:
    """Classes `self.<attr>` may hold in an instance of cls, and why the rest could not be resolved.

    The assignments are the first ones up the MRO, evaluated with `self` standing for
    cls: a subclass's own class attribute, builder method or constructor argument is the
    one used."""
    classes: list[ClassEntity] = []
    reasons: list[str] = []
    owner = next((c for c in resolver.mro(cls) if resolver.assigns(c, attr)), cls)
    for assign in resolver.assigns(owner, attr):
        for value in assign.values:
            for ent in resolver.evaluate(value, owner.path, cls):
                if isinstance(ent, InstanceEntity):
                    if ent.cls not in classes:
                        classes.append(ent.cls)
                elif isinstance(ent, Unknown):
                    reasons.append(ent.reason)
                else:
                    kind = type(ent).__name__.removesuffix("Entity").lower()
                    reasons.append(f"line {assign.line}: assigned a {kind}, not an instance")
    return classes, list(dict.fromkeys(reasons))


def read_off_classes(resolver: Resolver, cls: ClassEntity, attr: str) -> list[ClassEntity]:
    """Where every value of `self.<attr>` is read off another object the class builds
    (`self.text_model = text_model.text_model`, `text_model = CLIPTextModel(...)`): the
    classes that object's own instance attribute holds, as Python looks it up; empty when
    any part cannot be resolved."""
    owner = next((c for c in resolver.mro(cls) if resolver.assigns(c, attr)), cls)
    out: list[ClassEntity] = []
    for assign in resolver.assigns(owner, attr):
        for value in assign.values:
            if value.kind != "attr" or not value.args:
                return []
            for obj in resolver.evaluate(value.args[0], owner.path, cls):
                if not isinstance(obj, InstanceEntity) or not any(
                        value.name in resolver.info(c).self_assigns for c in resolver.mro(obj.cls)):
                    return []
                held, why = held_classes(resolver, obj.cls, value.name)
                if why or not held:
                    return []
                out += [c for c in held if c not in out]
    return out


def bound_parameter(resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None, depth: int) -> list[Entity]:
    """What a constructor parameter holds in an instance of `owner`: what the nearest
    subclass `__init__` passes up for it, else its default. Parameters of other functions
    (their callers pass what they like) stay unknown."""
    unknown: list[Entity] = [Unknown(f"parameter '{ref.name}'")]
    cls_name, _, method = ref.attr.rpartition(".")
    mod = resolver.module(path)
    if method != CONSTRUCTOR or mod is None or cls_name not in mod.classes:
        return unknown
    definer = ClassEntity(path, cls_name)
    fn = mod.classes[cls_name].methods.get(CONSTRUCTOR)
    param = next((p for p in fn.params if p.name == ref.name), None) if fn else None
    if fn is None or param is None or param.kind in ("vararg", "varkw"):
        return unknown
    mro = resolver.mro(owner) if owner is not None else []
    callers = [c for c in mro[:mro.index(definer)] if CONSTRUCTOR in resolver.info(c).methods] \
        if definer in mro else []
    if callers:
        caller = callers[-1]  # its super().__init__ reaches the definer's
        passed = _passed(resolver, caller, definer, fn, param)
        if passed:
            return [e for r in passed for e in resolver.evaluate(r, caller.path, owner, depth)]
    if param.default is None:
        return unknown
    try:
        default = expression_refs(ast.parse(param.default.strip(), mode="eval").body, None)
    except (SyntaxError, RecursionError):
        return unknown
    return [e for r in default for e in resolver.evaluate(r, path, None, depth)]


def _passed(resolver: Resolver, caller: ClassEntity, definer: ClassEntity, fn: FunctionInfo,
            param: Param) -> list[Ref]:
    """The values caller's `__init__` passes for `param` to the definer's, by keyword or
    position; none where it does not pass it (a starred argument forwards what the
    loader passed, which never includes such a parameter)."""
    positional = [p.name for p in fn.params if p.kind in ("posonly", "pos")][1:]  # after self
    out: list[Ref] = []
    for call in resolver.info(caller).methods[CONSTRUCTOR].super_calls:
        if call.name != CONSTRUCTOR:
            continue
        args = list(call.args)
        if args and args[0].kind == "target":
            bases = [e for r in args.pop(0).args for e in resolver.evaluate(r, caller.path, None)]
            if not any(isinstance(b, ClassEntity) and definer in resolver.mro(b) for b in bases):
                continue  # `nn.Module.__init__(self)` beside `Base.__init__(self, ...)`
        for arg in args:
            by_position = arg.name.isdigit() and int(arg.name) < len(positional) \
                and positional[int(arg.name)] == param.name
            if by_position or (arg.name == param.name and param.kind != "posonly"):
                out.extend(arg.args)
    return out


def registry_lookup(resolver: Resolver, ref: Ref, path: str) -> list[Entity]:
    """`ModelRegistry.resolve_model_cls("Arch")`: `(the class, "Arch")`, the class being the
    registered one of that `__name__` (the first name found, as the registry tries a list in
    order). Without a name (the checkpoint's config names it): one such pair for every
    registered text model, each a class the lookup may return (served.py)."""
    registry = served(resolver, path)
    if not (registry.root / REGISTRY_FILE).is_file():
        return [Unknown(f"{registry.root.name} has no SGLang model registry ({REGISTRY_FILE})")]
    if not ref.name:
        found = text_models(resolver, path)
        if not found:
            return [Unknown(f"{ref.attr}, and no registered text model can be found in {registry.root.name}")]
        return [SeqEntity(c.path, None, (Ref("name", c.qualname), Ref("const", repr(c.qualname)))) for c in found]
    for name in ref.name.split(","):
        cls = registry.by_name.get(name)
        if cls is not None:
            return [SeqEntity(cls.path, None, (Ref("name", cls.qualname), Ref("const", repr(name))))]
    return [Unknown(f"no module of {registry.root.name} lists {ref.name.replace(',', ' or ')} in its EntryClass")]
