"""One wrapper class against the interface members: its findings, and its subclasses'.

Why each class is judged with its own choice: the held class is often picked by a
class attribute, a builder method or a factory that a subclass overrides
(`language_model_cls = Qwen2ForCausalLM`). A subclass that picks another class has
other gaps than its base, so it is judged on its own; one that picks the same class
inherits the base's gaps and is named in the base's finding.
"""

from __future__ import annotations

import bisect
import builtins
import itertools
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..analysis.python.prefilter import is_dynamic_attr
from ..analysis.python.presence import late_member, presence
from ..analysis.python.resolve import ClassEntity, Member, Resolver, Unknown
from ..analysis.python.summary import free_names_of_text, mentions
from ..analysis.sglang.capture_chain import CAPTURE_HOOK
from ..analysis.sglang.capture_chain import FLAG as CAPTURE_FLAG
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.held import holds_language_model
from ..analysis.sglang.owners import owner_analysis
from ..analysis.sglang.served import is_served, provides
from ..analysis.sglang.wrappers import is_component, wrapped_candidates
from ..findings import Finding
from ..fix.delegation import refusal
from ..fix.members import plan_delegation_file
from ..packs import InterfaceMethod, load_interfaces
from .context import WRAPPERS, Context, wrappers

SEVERITY_BY_CALLED_ON = {"target": "EGL001", "draft": "EGL002"}
OPTIONAL_CODE = "EGL003"  # a target member the engine tests for (hasattr/getattr) and copes without
UNRESOLVED = "EGL010"


def code_for(member: InterfaceMethod) -> str:
    if member.called_on == "target" and not member.required:
        return OPTIONAL_CODE
    return SEVERITY_BY_CALLED_ON[member.called_on]


CODES = (*SEVERITY_BY_CALLED_ON.values(), OPTIONAL_CODE, UNRESOLVED)
FIX = plan_delegation_file  # its fixable codes' fix: a delegating method per finding
SUBJECTS = WRAPPERS
subjects = wrappers


def check(context: Context, cls: ClassEntity) -> list[Finding]:
    return check_wrapper(context, cls, context.wrappers[cls], context.methods)


def check_wrapper(run: Context, wrapper: ClassEntity, attr: str, methods: list[InterfaceMethod]) -> list[Finding]:
    """The wrapper's findings, and those of scanned subclasses that pick another held class."""
    resolver = run.resolver
    if is_component(resolver, wrapper):
        return []
    if is_draft(resolver, wrapper):  # loaded only as a draft: target-side members are never called on it
        methods = [m for m in methods if m.called_on == "draft"]
    own = wrapped_candidates(resolver, wrapper, attr)
    same: list[tuple[ClassEntity, bool]] = []
    other: list[tuple[ClassEntity, bool]] = []
    for sub, entry in _subclasses(run, wrapper, attr):
        (same if wrapped_candidates(resolver, sub, attr) == own else other).append((sub, entry))
    out = _judge(run, wrapper, attr, methods, same)
    for sub, _ in other:
        out += _judge(run, sub, attr, methods, [])
    return out


def _judge(run: Context, cls: ClassEntity, attr: str, methods: list[InterfaceMethod],
           subs: list[tuple[ClassEntity, bool]]) -> list[Finding]:
    resolver = run.resolver
    info = resolver.info(cls)
    path = os.path.abspath(cls.path)
    classes, reasons = wrapped_candidates(resolver, cls, attr)
    common: dict[str, Any] = dict(class_name=info.name, wrapper_attribute=attr)
    if not classes:
        if not reasons or all(presence(resolver, cls, m.name, attr) is True for m in methods):
            return []  # only ever None or constants, or a __getattr__ forwards every member
        if declares_marker(resolver, cls):
            return []  # a vLLM model that declares EAGLE-3 support: nothing missing, whatever it holds
        subs = [(s, e) for s, e in subs if not all(presence(resolver, s, m.name, attr) is True for m in methods)]
        labels = _labels(cls, subs)
        also = f"; inherited by {', '.join(labels)}" if labels else ""
        return [Finding(path, info.line, info.column, UNRESOLVED,
                        f"{info.name} holds self.{attr}, but its class cannot be resolved: "
                        f"{'; '.join(reasons[:3])}{also}", **common,
                        entry_class=is_served(resolver, cls) or any(e for _, e in subs),
                        subclasses=tuple(labels))]
    if is_dynamic_attr(attr):  # `setattr(self, name, LM(...))`: no attribute a delegation could name
        missing = [m.name for m in methods if presence(resolver, cls, m.name, attr) is not True
                   and _provider(resolver, classes, m.name)]
        return [Finding(path, info.line, info.column, UNRESOLVED,
                        f"{info.name} holds a language model ({classes[0].qualname}) under a name set at run "
                        f"time ({attr.strip('<>')}): cannot tell which attribute holds it, nor whether "
                        f"{', '.join(missing)} reach it", **common, wrapped_class=classes[0].qualname,
                        entry_class=is_served(resolver, cls))] if missing else []
    out = []
    for method in methods:
        has = presence(resolver, cls, method.name, attr)
        if has is True:
            continue
        provider = _provider(resolver, classes, method.name)
        held_by, candidates = attr, classes
        if provider is None:  # the held model may hold it in turn (a thinker holding the language model)
            deeper = _held_provider(run, classes, method.name)
            if deeper is None:
                continue
            inner_attr, candidates, provider = deeper
            held_by = f"{attr}.{inner_attr}"
        wrapped, member = provider
        if isinstance(has, Unknown):
            out.append(Finding(path, info.line, info.column, UNRESOLVED,
                               f"{info.name}: cannot tell whether it has {method.name}, which its {attr} "
                               f"({wrapped.qualname}) provides: {has.reason}", **common, method=method.name,
                               wrapped_class=wrapped.qualname, entry_class=is_served(resolver, cls)))
            continue
        inheriting = [(s, e) for s, e in subs if presence(resolver, s, method.name, attr) is not True]
        entry = is_served(resolver, cls) or any(e for _, e in inheriting)
        providing = sum(1 for c in candidates if provides(resolver, c, method.name))
        every = not reasons and providing == len(candidates)
        finding = _finding(path, info, held_by, method, wrapped, member, _labels(cls, inheriting), entry,
                           (providing, len(candidates)))
        refused = _fix_refusal(resolver, cls, method, member)
        if method.name == CAPTURE_HOOK and refused is None and held_by == attr:
            chains = owner_analysis(resolver).chains
            how, why = chains.wrapper_capture_plan(cls, candidates, attr)
            if how == "owner":
                finding = replace(finding, message=finding.message.replace(
                    "add a delegation (eaglelint fix)",
                    f"but {wrapped.qualname} is a decoder body whose {method.name} only marks layers: write it "
                    f"as an owner does (eaglelint fix sets self.{CAPTURE_FLAG}, maps None to the default "
                    f"layers, shifts by one, and calls it)"))
            if how == "refuse":
                finding = replace(finding, message=finding.message.replace(
                    "add a delegation (eaglelint fix)", f"no automatic fix: {why}"))
            refused = why if how == "refuse" else None
        out.append(replace(finding, every_candidate=every, fix_refusal=refused))
    return out


def declares_marker(resolver: Resolver, cls: ClassEntity) -> bool:
    """cls lists a pack's marker protocol (vLLM's SupportsEagle3) among its bases."""
    markers = {i.marker for i in load_interfaces().values() if i.marker}
    return any(c.qualname in markers for c in resolver.mro(cls))


def _labels(cls: ClassEntity, subs: list[tuple[ClassEntity, bool]]) -> list[str]:
    return [s.qualname if s.path == cls.path else f"{s.qualname} ({Path(s.path).name})" for s, _ in subs]


def _fix_refusal(resolver: Resolver, wrapper: ClassEntity, method: InterfaceMethod, member: Member) -> str | None:
    """Why the delegation planner (fix/members.py) will not write this delegation (the same
    tests it makes, from the summaries), or None."""
    fn = member.function
    if fn is None:
        if method.kind == "method":
            return f"the wrapped {method.name} is not a plain method (an attribute?); delegate it by hand"
        return None  # a property forwarding the attribute
    why = refusal(fn)
    if why is not None:
        return why
    bound = set(resolver.module(wrapper.path).names) | set(resolver.module(member.owner.path).names)
    for p in fn.params:
        if p.default is not None and not all(hasattr(builtins, n) or n in bound
                                             for n in free_names_of_text(p.default, value=True)):
            return f"default of {p.name} uses a name that cannot be imported here"
    return None


def _provider(resolver: Resolver, classes: list[ClassEntity], name: str) -> tuple[ClassEntity, Member] | None:
    """The first candidate that has `name`; a member bound per instance in a method
    (`self.capture_aux_hidden_states = False`, `self.get_embed_and_head = ...`) or added
    after the class body (presence.py `late_member`) counts too."""
    for cls in classes:
        member = resolver.find_member(cls, name)
        if member is not None:
            return cls, member
    for cls in classes:
        for owner in resolver.mro(cls):
            assigns = resolver.assigns(owner, name)
            if assigns:
                return cls, Member(owner, assigns[0].line, None)
    for cls in classes:  # added after the body (a class decorator, `Cls.member = f`)
        late = late_member(resolver, cls, name)
        if late is not None:
            return cls, late
    return None


def _held_provider(run: Context, classes: list[ClassEntity], name: str,
                   ) -> tuple[str, list[ClassEntity], tuple[ClassEntity, Member]] | None:
    """Where the held classes lack `name` but hold, as `self.<inner>`, a language model that has
    it (a thinker holding the language model, delegating only some members): the inner
    attribute, the classes it may hold, and the provider. The engine calls the member on the
    outermost object, so the path from it decides. Only attributes that discovery found
    holding a language model somewhere in the tree are followed (Context.held_attrs)."""
    resolver, names = run.resolver, tuple(m.name for m in run.methods)
    for held in classes:
        for owner in resolver.mro(held):
            for inner in resolver.info(owner).self_assigns:
                if inner not in run.held_attrs or is_dynamic_attr(inner) \
                        or not holds_language_model(resolver, held, inner, names):
                    continue
                found, _ = wrapped_candidates(resolver, held, inner)
                provider = _provider(resolver, found, name)
                if provider is not None:
                    return inner, found, provider
    return None


def _finding(path, info, attr, method: InterfaceMethod, wrapped: ClassEntity, member: Member,
             subclasses: list[str], entry: bool, providing: tuple[int, int] = (1, 1)) -> Finding:
    """`providing`: how many of the classes the attribute may hold provide the member, of how many."""
    where = f"{Path(member.owner.path).name}:{member.line}"
    via = "" if member.owner == wrapped else f" via {member.owner.qualname}"
    some, candidates = providing
    several = some < candidates  # some of the classes it may hold lack it: say how many have it
    held = f"{some} of the {candidates} classes its {attr} may hold ({wrapped.qualname}{via}, {where}, ...)" \
        if several else f"its {attr} ({wrapped.qualname}{via}, {where})"
    draft = " (the engine calls it only on draft models today)" if method.called_on == "draft" else \
        " (the engine tests for it and falls back without it)" if not method.required else ""
    also = f"; inherited by {', '.join(subclasses)}" if subclasses else ""
    message = (
        f"{info.name} lacks {method.name}, which {held} "
        f"provide{'' if several else 's'}{draft}{also}; add a delegation (eaglelint fix)"
    )
    return Finding(
        path, info.line, info.column, code_for(method), message,
        class_name=info.name, wrapped_class=wrapped.qualname, method=method.name,
        wrapped_path=os.path.abspath(member.owner.path), wrapped_line=member.line,
        provider_class=member.owner.qualname, interface=method.interface,
        wrapper_attribute=attr, entry_class=entry, subclasses=tuple(subclasses),
    )


def _subclasses(run: Context, wrapper: ClassEntity, attr: str) -> list[tuple[ClassEntity, bool]]:
    """Scanned subclasses of a wrapper that do not hold the model themselves (memoised),
    each with: is it in its module's EntryClass?"""
    memo: dict[tuple[ClassEntity, str], list[tuple[ClassEntity, bool]]] = run.memo("subclasses", dict)
    if (wrapper, attr) in memo:
        return memo[(wrapper, attr)]
    out = []
    needle = wrapper.qualname.rsplit(".", 1)[-1].encode()
    naming = run.memo("subclasses.files", lambda: files_naming(
        run.raws, {w.qualname.rsplit(".", 1)[-1].encode() for w in run.wrappers}))
    for path in naming[needle] if needle in naming else files_naming(run.raws, {needle})[needle]:
        raw = run.raws[path]
        mod = run.project.summary(path, raw)
        if mod is None:
            continue
        pattern, words = mentions(mod, needle.decode())
        for cls in mod.classes_matching(pattern, subclasses=True, needles=words):
            sub = ClassEntity(mod.path, cls.name)
            if sub != wrapper and attr not in cls.self_assigns and wrapper in run.resolver.mro(sub):
                out.append((sub, is_served(run.resolver, sub)))
    memo[(wrapper, attr)] = out
    return out


def files_naming(raws: dict[Path, bytes], names: set[bytes]) -> dict[bytes, list[Path]]:
    """For each of `names`, the files (in the order of `raws`) whose bytes hold it, as `name in
    raw`: one scan of all the files per part that several names share (most wrappers' names end
    with `ForConditionalGeneration` or `ForCausalLM`, five start with `MiniCPM`), not one scan
    per name and file. A name occurs where such a part of it does, with the rest around it."""
    paths = list(raws)
    starts = list(itertools.accumulate((len(raw) + 1 for raw in raws.values()), initial=0))
    text = b"\0".join(raws.values())  # no name holds a NUL: none is found across two files
    parts: dict[bytes, list[tuple[bytes, int]]] = {}  # a part -> each name it stands for, where in it
    for name in sorted(names):
        part, offset = name, 0
        for size in range(len(name) - 1, SHARED_PART_MIN - 1, -1):
            if any(other != name and other.endswith(name[-size:]) for other in names):
                part, offset = name[-size:], len(name) - size
                break
            if any(other != name and other.startswith(name[:size]) for other in names):
                part = name[:size]
                break
        parts.setdefault(part, []).append((name, offset))
    for part in sorted(parts, key=len, reverse=True):  # a part that holds a shorter one: scanned as that one
        inner = next((p for p in parts if len(p) < len(part) and p in part), None)
        if inner is not None:
            at = part.index(inner)
            parts[inner] += [(name, offset + at) for name, offset in parts.pop(part)]
    found: dict[bytes, set[int]] = {name: set() for name in names}
    for part, group in parts.items():
        at = text.find(part)
        while at >= 0:
            for name, offset in group:
                if at >= offset and text.startswith(name, at - offset):
                    found[name].add(bisect.bisect_right(starts, at - offset) - 1)
            at = text.find(part, at + 1)
    return {name: [paths[i] for i in sorted(found[name])] for name in names}


SHARED_PART_MIN = 6  # the shortest part of a name scanned for on behalf of several
