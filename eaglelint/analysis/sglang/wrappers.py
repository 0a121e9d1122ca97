"""Which classes are wrappers, and what they hold: the queries every wrapper rule asks.

Why in analysis: the member rules, the path rules, the dependents search and the
support matrix all ask which classes `self.<attr>` may hold; none of them owns it.
"""

from __future__ import annotations

from ..python.choices import held_classes
from ..python.resolve import ClassEntity, Resolver
from ..python.summary import mentions
from ..syntax.refs import Ref
from .served import is_served


def wrapped_candidates(resolver: Resolver, wrapper: ClassEntity, attr: str) -> tuple[list[ClassEntity], list[str]]:
    """Classes `self.<attr>` may hold in an instance of wrapper (choices.py: the first
    assignment up the MRO, with the subclass's own class attributes, builders and
    constructor arguments), and why the rest could not be resolved. A dotted `attr`
    (`thinker.language_model`, a model held by what the wrapper holds) is followed part by part."""
    first, _, rest = attr.partition(".")
    classes, reasons = held_classes(resolver, wrapper, first)
    if not rest:
        return classes, reasons
    out: list[ClassEntity] = []
    for held in classes:
        found, why = wrapped_candidates(resolver, held, rest)
        out += [c for c in found if c not in out]
        reasons += why
    return out, reasons


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
