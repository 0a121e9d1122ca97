"""Whether a class has a member at run time: present, absent, or unknown (and why).

Why three answers: besides defining or inheriting a name, a class can get it from a
`__getattr__` that forwards it (only some names, perhaps), from a class decorator, or
from a `setattr(C, ...)` / `C.name = ...` after its body. A decorator of the scanned
tree that sets names on the class it returns, and a statement that names the member,
are read (for the held class as for the wrapper); one that cannot be read, or a
`__getattr__` branch eaglelint cannot decide, would make "absent" a false finding and
"present" a missed gap, so the answer is `Unknown(why)`.
"""

from __future__ import annotations

from .forwarding import forwarded
from .resolve import ClassEntity, FunctionEntity, Member, Resolver, Unknown

# class decorators that add no methods to a class
HARMLESS_DECORATORS = frozenset({"dataclass", "final", "runtime_checkable", "total_ordering"})


def has_member(resolver: Resolver, cls: ClassEntity, name: str) -> bool:
    """Defined or inherited, bound per instance (`self.get_embed_and_head = ...`), or added
    after the body by a statement or class decorator that names it."""
    if resolver.find_member(cls, name) is not None:
        return True
    return any(resolver.assigns(c, name) for c in resolver.mro(cls)) \
        or late_member(resolver, cls, name) is not None


def late_member(resolver: Resolver, cls: ClassEntity, name: str) -> Member | None:
    """Where `name` is added to cls or a base after its body: `C.name = f`, `setattr(C, "name",
    f)` at module level, or a class decorator of the scanned tree that sets it on the class
    (`cls.name = f`): the class it is added to and the line (the statement's, or the class's)."""
    for c in resolver.mro(cls):
        added = resolver.module(c.path).late_members.get(c.qualname, [])
        line = next((line for line, _, member in added if member == name), None)
        if line is not None:
            return Member(c, line, None)
        if any(name in (adds or ()) for adds in (_adds(resolver, c, d) for d in resolver.decorators(c))):
            return Member(c, resolver.info(c).line, None)
    return None


def presence(resolver: Resolver, cls: ClassEntity, name: str, attr: str) -> bool | Unknown:
    """Whether instances of `cls` have `name` for the engine: True, False, or Unknown.

    `attr` is the attribute holding the language model: a `__getattr__` that forwards
    `name` to it counts as having it; one that raises, or forwards it elsewhere, does not.
    What is added after the body is read where it can be (has_member); an addition whose
    name cannot be read, or a decorator that cannot be, leaves the answer unknown."""
    if has_member(resolver, cls, name):
        return True
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    outcome = forwarded(node, name) if node is not None else ("refuse", "")
    if outcome[0] == "forward":
        return outcome[1] == attr
    for c in resolver.mro(cls):
        unread = [(line, how) for line, how, member in resolver.module(c.path).late_members.get(c.qualname, [])
                  if not member]
        if unread:
            line, how = unread[0]
            return Unknown(f"{how} after its body (line {line}), which may add {name}")
        odd = [d for d in resolver.decorators(c) if _adds(resolver, c, d) is None]
        if odd:
            return Unknown(f"{c.qualname} is decorated with @{odd[0]}, which may add {name}")
    if outcome[0] == "unknown":
        return Unknown(f"cannot tell whether its __getattr__ forwards {name}: {outcome[1]}")
    return False


def _adds(resolver: Resolver, cls: ClassEntity, decorator: str) -> tuple[str, ...] | None:
    """What a class decorator adds: () for one known to add nothing, the names a decorator of
    the scanned tree sets on the class it returns; None where that cannot be read."""
    if decorator.split("(")[0].split(".")[-1].strip() in HARMLESS_DECORATORS:
        return ()
    if not decorator.isidentifier():
        return None
    found = resolver.lookup(cls.path, decorator)
    functions = [resolver.function(f) if isinstance(f, FunctionEntity) else None for f in found]
    if not functions or any(f is None or f.adds_members is None for f in functions):
        return None
    return tuple(n for f in functions for n in f.adds_members or ())


def forwards_some(resolver: Resolver, cls: ClassEntity, attr: str, names: list[str]) -> bool:
    """Its `__getattr__` forwards at least one of `names` to `attr`."""
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    return node is not None and any(forwarded(node, n) == ("forward", attr) for n in names)
