"""Whether a class has a member at run time: present, absent, or unknown (and why).

Why three answers: besides defining or inheriting a name, a class can get it from a
`__getattr__` that forwards it (only some names, perhaps), from a class decorator, or
from a `setattr(C, ...)` / `C.name = ...` after its body. eaglelint cannot weigh
the last two, and a `__getattr__` branch it cannot decide; saying "absent" there would
be a false finding and "present" a missed gap, so the answer is `Unknown(why)`.
"""

from __future__ import annotations

from .forwarding import forwarded
from .resolve import ClassEntity, FunctionEntity, Resolver, Unknown

# class decorators that add no methods to a class
HARMLESS_DECORATORS = frozenset({"dataclass", "final", "runtime_checkable", "total_ordering"})


def has_member(resolver: Resolver, cls: ClassEntity, name: str) -> bool:
    """Defined or inherited, or bound per instance (`self.get_embed_and_head = ...`)."""
    if resolver.find_member(cls, name) is not None:
        return True
    return any(name in resolver.info(c).self_assigns for c in resolver.mro(cls))


def presence(resolver: Resolver, cls: ClassEntity, name: str, attr: str) -> bool | Unknown:
    """Whether instances of `cls` have `name` for the engine: True, False, or Unknown.

    `attr` is the attribute holding the language model: a `__getattr__` that forwards
    `name` to it counts as having it; one that raises, or forwards it elsewhere, does not."""
    if has_member(resolver, cls, name):
        return True
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    outcome = forwarded(node, name) if node is not None else ("refuse", "")
    if outcome[0] == "forward":
        return outcome[1] == attr
    for c in resolver.mro(cls):
        info = resolver.info(c)
        added = resolver.module(c.path).late_members.get(c.qualname, [])
        if added:
            line, how = added[0]
            return Unknown(f"{how} after its body (line {line}), which may add {name}")
        odd = [d for d in info.decorators if not _harmless(resolver, c, d)]
        if odd:
            return Unknown(f"{c.qualname} is decorated with @{odd[0]}, which may add {name}")
    if outcome[0] == "unknown":
        return Unknown(f"cannot tell whether its __getattr__ forwards {name}: {outcome[1]}")
    return False


def _harmless(resolver: Resolver, cls: ClassEntity, decorator: str) -> bool:
    """A decorator known to add no methods, or one in the scanned tree that returns the
    class untouched."""
    if decorator.split("(")[0].split(".")[-1].strip() in HARMLESS_DECORATORS:
        return True
    if not decorator.isidentifier():
        return False
    found = resolver.lookup(cls.path, decorator)
    functions = [resolver.function(f) if isinstance(f, FunctionEntity) else None for f in found]
    return bool(functions) and all(f is not None and f.keeps_argument for f in functions)


def forwards_some(resolver: Resolver, cls: ClassEntity, attr: str, names: list[str]) -> bool:
    """Its `__getattr__` forwards at least one of `names` to `attr`."""
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    return node is not None and any(forwarded(node, n) == ("forward", attr) for n in names)
