"""Classes chosen at run time, resolved where the code decides.

Why: SGLang often picks the model a class holds by a value decided when it is built:
a constructor parameter with a default (`language_model_cls=Qwen3LLMModel`, which a
subclass overrides by passing another class up through `super().__init__`; the
resolver follows that binding, resolve.py `Resolver._parameter`), or a lookup in an
engine's model registry by architecture name (its hook evaluates it: served.py for
SGLang's, vllm_registry.py for vLLM's loaders). What `self.<attr>` holds is asked here
per class `self` stands for, so that each subclass gets its own verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .entities import ClassEntity, InstanceEntity, Unknown

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

