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

import os

from ..syntax.forwarding import forwarded
from ..syntax.refs import Ref
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
        added = resolver.module_of(c).late_members.get(c.qualname, [])
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
        chosen = base_choice(resolver, cls, name)
        return True if chosen is None else chosen
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    outcome = forwarded(node, name) if node is not None else ("refuse", "")
    if outcome[0] == "forward":
        return outcome[1] == attr
    for c in resolver.mro(cls):
        unread = [(line, how) for line, how, member in resolver.module_of(c).late_members.get(c.qualname, [])
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


def base_choice(resolver: Resolver, cls: ClassEntity, name: str) -> Unknown | None:
    """Unknown where cls gets `name` only from a base chosen when its module runs, and only some
    of the classes it may be have it: a base named by a module-level name bound to several
    classes (`Base = A if hasattr(LM, "x") else B`, `if os.environ.get(...): Base = A` / `else:
    Base = B`). The MRO holds every such class (resolve.py), so `has_member` finds the name in
    any of them; the engine sees one. Where every possibility has it, or none does, the answer
    stands as it is (a finding is then a proof whichever is chosen)."""
    mro = resolver.mro(cls)
    for c in mro:
        for ref in resolver.base_refs(c):
            found = resolver.evaluate(ref, c.path)
            choices = list(dict.fromkeys(e for e in found if isinstance(e, ClassEntity) and e != c))
            if len(choices) < 2:
                continue
            reached = [set(resolver.mro(choice)) for choice in choices]
            only_chosen = set().union(*reached) - reached[0].intersection(*reached[1:])
            if any(_binds(resolver, k, name) for k in mro if k not in only_chosen):
                return None  # given by cls, a class between, or a base every choice shares
            having = [choice for choice in choices if has_member(resolver, choice, name)]
            if having and len(having) < len(choices):
                lacking = [choice.qualname for choice in choices if choice not in having]
                return Unknown(f"the base {_spelled(ref)} of {c.qualname} is chosen when {os.path.basename(c.path)} "
                               f"runs: {', '.join(h.qualname for h in having)} has {name}, "
                               f"{', '.join(lacking)} lacks it")
    return None


def _binds(resolver: Resolver, cls: ClassEntity, name: str) -> bool:
    """cls's own body defines or binds `name`, or a method assigns `self.<name>`."""
    if not resolver.may_bind(cls, name):
        return False
    info = resolver.info(cls)
    return name in info.methods or name in info.attrs or name in info.self_assigns


def _spelled(ref: Ref) -> str:
    return ref.name if ref.kind == "name" else f"{_spelled(ref.args[0])}.{ref.name}" \
        if ref.kind == "attr" and ref.args else "..."


def _adds(resolver: Resolver, cls: ClassEntity, decorator: str) -> tuple[str, ...] | None:
    """What a class decorator adds: () for one known to add nothing, the names a decorator of
    the scanned tree sets on the class it returns; None where that cannot be read."""
    if decorator.split("(")[0].split(".")[-1].strip() in HARMLESS_DECORATORS:
        return ()
    if not decorator.isidentifier():
        return None
    found = resolver.lookup(cls.path, decorator)
    functions = [resolver.function(f) if isinstance(f, FunctionEntity) else None for f in found]
    adds = [f.adds_members if f is not None else None for f in functions]
    if not adds or any(a is None for a in adds):
        return None
    return tuple(n for a in adds for n in a or ())


def forwards_some(resolver: Resolver, cls: ClassEntity, attr: str, names: list[str]) -> bool:
    """Its `__getattr__` forwards at least one of `names` to `attr`."""
    member = resolver.find_member(cls, "__getattr__")
    node = resolver.info(member.owner).getattr_forwards if member is not None else None
    return node is not None and any(forwarded(node, n) == ("forward", attr) for n in names)
