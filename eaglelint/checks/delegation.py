"""One wrapper class against the interface members: its findings, and its subclasses'.

Why each class is judged with its own choice: the held class is often picked by a
class attribute, a builder method or a factory that a subclass overrides
(`language_model_cls = Qwen2ForCausalLM`). A subclass that picks another class has
other gaps than its base, so it is judged on its own; one that picks the same class
inherits the base's gaps and is named in the base's finding.
"""

from __future__ import annotations

import bisect
import itertools
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..analysis.python.prefilter import is_dynamic_attr
from ..analysis.python.presence import late_member, presence
from ..analysis.python.resolve import ClassEntity, Member, Resolver, Unknown
from ..analysis.python.summary import FunctionInfo, mentions
from ..analysis.sglang.capture_chain import CAPTURE_HOOK
from ..analysis.sglang.capture_chain import FLAG as CAPTURE_FLAG
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.held import holds_language_model
from ..analysis.sglang.owners import owner_analysis
from ..analysis.sglang.served import is_served, provides
from ..analysis.sglang.wrappers import is_component, wrapped_candidates
from ..findings import Finding
from ..fix.delegation import refusal
from ..fix.imports import ImportPlan
from ..fix.intent import CaptureAsOwner, Delegate
from ..fix.members import data_member, default_refusal, plan_delegation_file
from ..packs import InterfaceMethod, load_interfaces
from .context import WRAPPERS, Context, wrappers
from .labels import inherited_by, subclass_labels

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
SUBJECT_TEXT = None  # its subjects are the wrappers discovery found
files = None
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
        labels = subclass_labels(cls, (s for s, _ in subs))
        message, help_lines = unresolved_text(info.name, attr, reasons, labels)
        return [Finding(path, info.line, info.column, UNRESOLVED, message, help=help_lines, **common,
                        entry_class=is_served(resolver, cls) or any(e for _, e in subs),
                        subclasses=labels)]
    if is_dynamic_attr(attr):  # `setattr(self, name, LM(...))`: no attribute a delegation could name
        missing = [m.name for m in methods if presence(resolver, cls, m.name, attr) is not True
                   and _provider(resolver, classes, m.name)]
        if not missing:
            return []
        message, help_lines = run_time_name_text(info.name, classes[0], attr, missing)
        return [Finding(path, info.line, info.column, UNRESOLVED, message, help=help_lines, **common,
                        wrapped_class=classes[0].qualname, entry_class=is_served(resolver, cls))]
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
            message, help_lines = undecided_text(info.name, method.name, attr, wrapped, has.reason)
            out.append(Finding(path, info.line, info.column, UNRESOLVED, message, help=help_lines, **common,
                               method=method.name, wrapped_class=wrapped.qualname,
                               entry_class=is_served(resolver, cls)))
            continue
        inheriting = [(s, e) for s, e in subs if presence(resolver, s, method.name, attr) is not True]
        entry = is_served(resolver, cls) or any(e for _, e in inheriting)
        providing = sum(1 for c in candidates if provides(resolver, c, method.name))
        every = not reasons and providing == len(candidates)
        how = "delegate"
        function, refused = _delegated(resolver, cls, method, member)
        if method.name == CAPTURE_HOOK and refused is None:
            chains = owner_analysis(resolver).chains
            held = candidates if held_by == attr else wrapped_candidates(resolver, cls, held_by)[0]
            how, why = chains.wrapper_capture_plan(cls, held, held_by)
            refused = why if how == "refuse" else None
        finding = _finding(path, info, held_by, method, wrapped, member,
                           list(subclass_labels(cls, (s for s, _ in inheriting))), entry,
                           (providing, len(candidates)), how)
        intent: Delegate | CaptureAsOwner | None = None
        if refused is None and how == "owner":
            intent = CaptureAsOwner(held_by)
        elif refused is None and function is not None:
            intent = Delegate(method.name, held_by, member.owner, function, every)
        out.append(replace(finding, fix_refusal=refused, intent=intent))
    return out


def declares_marker(resolver: Resolver, cls: ClassEntity) -> bool:
    """cls lists a pack's marker protocol (vLLM's SupportsEagle3) among its bases."""
    markers = {i.marker for i in load_interfaces().values() if i.marker}
    return any(c.qualname in markers for c in resolver.mro(cls))


def _delegated(resolver: Resolver, wrapper: ClassEntity, method: InterfaceMethod,
               member: Member) -> tuple[FunctionInfo | None, str | None]:
    """What a delegation to `member` copies (its function; for an attribute, a read-only
    property), or why the planner (fix/members.py) cannot write one: a wrapped member that
    is no plain method, or a default value that reads a name the wrapper's file cannot import."""
    fn = member.function
    if fn is None:
        if method.kind == "method":
            return None, f"the wrapped {method.name} is not a plain method (an attribute?); delegate it by hand"
        return data_member(method.name), None  # a property forwarding the attribute
    why = refusal(fn)
    if why is None and any(p.default is not None for p in fn.params):
        imports = ImportPlan(resolver.module(wrapper.path), resolver.project, Path(os.path.abspath(wrapper.path)))
        why = default_refusal(fn, imports, Path(os.path.abspath(member.owner.path)))
    return (fn, None) if why is None else (None, why)


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
             subclasses: list[str], entry: bool, providing: tuple[int, int] = (1, 1),
             how: str = "delegate") -> Finding:
    """`providing`: how many of the classes the attribute may hold provide the member, of how many;
    `how`: the fix (capture_chain.py `wrapper_capture_plan`: delegate, owner, refuse)."""
    message, help_lines = delegation_text(info.name, method, attr, wrapped, member, providing, subclasses, how)
    return Finding(
        path, info.line, info.column, code_for(method), message, help=help_lines,
        fix_title=fix_title(method.name, attr, how),
        class_name=info.name, wrapped_class=wrapped.qualname, method=method.name,
        wrapped_path=os.path.abspath(member.owner.path), wrapped_line=member.line,
        provider_class=member.owner.qualname, interface=method.interface,
        wrapper_attribute=attr, entry_class=entry, subclasses=tuple(subclasses),
    )


# -- the messages of this family's codes, each built here only ------------------------------------

def delegation_text(name: str, method: InterfaceMethod, attr: str, wrapped: ClassEntity, member: Member,
                    providing: tuple[int, int], subclasses: list[str], how: str) -> tuple[str, tuple[str, ...]]:
    """EGL001/EGL002/EGL003: the member the wrapper lacks and what provides it; the help says
    when the engine calls it, who inherits the gap, and why a capture member is written as
    an owner writes it."""
    where = f"{Path(member.owner.path).name}:{member.line}"
    some, candidates = providing
    several = some < candidates  # some of the classes it may hold lack it: say how many have it
    held = f"{some} of the {candidates} classes its {attr} may hold" if several \
        else f"its {attr} ({wrapped.qualname}, {where})"
    help_lines: tuple[str, ...] = (f"among them {wrapped.qualname} ({where})",) if several else ()
    if member.owner != wrapped:
        help_lines += (f"{wrapped.qualname} inherits it from {member.owner.qualname}",)
    if method.called_on == "draft":
        help_lines += ("the engine calls it only on draft models today",)
    elif not method.required:
        help_lines += ("the engine tests for it and falls back without it",)
    help_lines += inherited_by(subclasses)
    if how == "owner":
        help_lines += (f"{wrapped.qualname} is a decoder body whose {method.name} only marks layers",)
    return f"{name} lacks {method.name}, which {held} provide{'' if several else 's'}", help_lines


def fix_title(member: str, attr: str, how: str = "delegate") -> str | None:
    """What `eaglelint fix` writes for EGL001/EGL002/EGL003 (none where `how` is refuse)."""
    if how == "owner":
        return (f"write {member} as an owner does: set self.{CAPTURE_FLAG}, map None to the default layers, "
                f"shift by one, and call it on self.{attr}")
    return f"delegate {member} to self.{attr}" if how == "delegate" else None


def unresolved_text(name: str, attr: str, reasons: list[str], subclasses: tuple[str, ...],
                    ) -> tuple[str, tuple[str, ...]]:
    """EGL010 where the held class cannot be resolved: the reasons (the first three), and who inherits it."""
    return f"{name} holds self.{attr}, but its class cannot be resolved", (*reasons[:3], *inherited_by(subclasses))


def run_time_name_text(name: str, held: ClassEntity, attr: str, missing: list[str]) -> tuple[str, tuple[str, ...]]:
    """EGL010 where the language model is held under a name set at run time (`setattr(self, name, LM(...))`)."""
    return (f"{name} holds a language model ({held.qualname}) under a name set at run time ({attr.strip('<>')})",
            (f"cannot tell which attribute holds it, nor whether {', '.join(missing)} reach it",))


def undecided_text(name: str, member: str, attr: str, wrapped: ClassEntity, reason: str,
                   ) -> tuple[str, tuple[str, ...]]:
    """EGL010 where whether the wrapper has the member cannot be told."""
    return f"{name}: cannot tell whether it has {member}, which its {attr} ({wrapped.qualname}) provides", (reason,)


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
