"""Which classes are wrappers, and what they hold: the queries every wrapper rule asks.

Why in analysis: the member rules, the path rules, the dependents search and the
support matrix all ask which classes `self.<attr>` may hold; none of them owns it.
"""

from __future__ import annotations

from .choices import held_classes
from .refs import Ref
from .resolve import ClassEntity, Resolver
from .served import is_served
from .summary import mentions


def wrapped_candidates(resolver: Resolver, wrapper: ClassEntity, attr: str) -> tuple[list[ClassEntity], list[str]]:
    """Classes `self.<attr>` may hold in an instance of wrapper (choices.py: the first
    assignment up the MRO, with the subclass's own class attributes, builders and
    constructor arguments), and why the rest could not be resolved."""
    return held_classes(resolver, wrapper, attr)


def is_component(resolver: Resolver, cls: ClassEntity) -> bool:
    """A class that another class of its module builds as a part (`self.thinker = W(...)`),
    and that the registry does not serve, is never the top-level model the engine calls."""
    mod, info = resolver.module(cls.path), resolver.info(cls)
    if mod is None or is_served(resolver, cls):
        return False
    made = Ref("call", args=(Ref("name", info.name),))
    pattern, words = mentions(mod, info.name)
    return any(
        made in assign.values
        for other in mod.classes_matching(pattern, needles=words) if other is not info
        for assigns in other.self_assigns.values() for assign in assigns
    )
