"""Which classes are wrappers, and what they hold: the queries every wrapper rule asks.

Why in analysis: the member rules, the path rules, the dependents search and the
support matrix all ask which classes `self.<attr>` may hold; none of them owns it.
"""

from __future__ import annotations

import re

from .choices import held_classes
from .refs import Ref
from .resolve import ClassEntity, Resolver

DEFAULT_WRAPPER_ATTRS = ("language_model",)  # held by this name: a wrapper whatever it holds

class WrapperAssignTest:
    """Bytes test for `self.<attr> =` / `self.<attr>: T`: files without it cannot hold a wrapper.

    Also `self.language_model, self.vision = ...`: a line that starts with it, a comma and
    then an `=` on that line (a call argument on a line of its own has no `=` after it).
    Three patterns, not one alternation: each starts with the literal `self`, which `re`
    scans for quickly; a pattern anchored at every line start is tried only on files
    where the comma form occurs (an alternation made the warm run 10x slower)."""

    def __init__(self, attrs: tuple[str, ...]):
        names = rb"self\s*\.\s*(?:" + b"|".join(re.escape(a.encode()) for a in attrs) + rb")\s*"
        self._plain = re.compile(names + rb"(?::|=(?!=))")
        self._comma = re.compile(names + rb",")
        self._tuple = re.compile(rb"^[ \t]*" + names + rb",[^\n=(]*=(?!=)", re.MULTILINE)

    def search(self, raw: bytes) -> bool:
        return bool(self._plain.search(raw) or (self._comma.search(raw) and self._tuple.search(raw)))


def wrapped_candidates(resolver: Resolver, wrapper: ClassEntity, attr: str) -> tuple[list[ClassEntity], list[str]]:
    """Classes `self.<attr>` may hold in an instance of wrapper (choices.py: the first
    assignment up the MRO, with the subclass's own class attributes, builders and
    constructor arguments), and why the rest could not be resolved."""
    return held_classes(resolver, wrapper, attr)


def is_component(mod, info) -> bool:
    """A class that another class of its module builds as a part (`self.thinker = W(...)`),
    and that is not in EntryClass, is never the top-level model the engine calls."""
    if info.name in mod.entry_classes:
        return False
    made = Ref("call", args=(Ref("name", info.name),))
    return any(
        made in assign.values
        for other in mod.classes.values() if other is not info
        for assigns in other.self_assigns.values() for assign in assigns
    )
