"""EGL040/EGL041: a registered owner class whose decoder collects aux hidden states,
but which lacks the EAGLE-3 members it must write itself.

Why: SGLang issue #17935 (Qwen3-VL fails to start with speculative decoding):
`Qwen3VLForConditionalGeneration` owns `lm_head` and `logits_processor` and holds a
`Qwen3Model` subclass that already collects aux hidden states, yet had no
`set_eagle3_layers_to_capture` / `get_embed_and_head` until SGLang wrote them by hand
in 0.5.11. The members are the ones the decoder family's own `*ForCausalLM` already
has; EGL040 when eaglelint can write them (and the forward change they need),
EGL041, with the reason, when it cannot.

Speed: a file is parsed for this rule only if one of its top-level class bodies
assigns `self.lm_head` and a decoder attribute, lacks one of the members, and does
not hold, by its own name, a class of the same file whose forward visibly never
collects (a bytes test; what it passes is then judged exactly).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis.python.choices import held_classes
from ..analysis.python.presence import has_member
from ..analysis.python.project import Project
from ..analysis.python.resolve import ClassEntity, Resolver
from ..analysis.sglang.class_index import ClassIndex
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.owners import (
    ASSIGNS_DECODER,
    CAPTURE_HOOK,
    DECODER_ATTRS,
    OWNER_MEMBERS,
    Owner,
    OwnerAnalysis,
    Sibling,
    owner_analysis,
)
from ..analysis.sglang.roles import is_draft_name
from ..analysis.sglang.served import served
from ..findings import Finding
from ..fix.intent import OwnerMember
from ..fix.owner import ClassPlan, NotFixable, plan_class, plan_owner_file, writes_capture
from ..packs import InterfaceMethod
from .context import Context
from .labels import inherited_by, subclass_labels

CODE = "EGL040"  # fixable: eaglelint writes the members as the sibling does
NO_FIX_CODE = "EGL041"  # same gap, no automatic fix (the finding says why)

_WORD = re.compile(rb"\w+")
# possessive `++`/`*+`: what follows each never matches what it would give back, so the matches
# are those of the plain pattern, found without retrying every shorter split
_FRESH = re.compile(rb"\b(\w++)\s*+(?::[^=\n]*+)?=\s*+\(?\s*+(?:\[\s*\]|list\(\)|[A-Z]\w*+(?:\.\w++)?\()")
# `return self._forward_impl(...)`: a forward that returns what a method of its own returns
_RETURNS_OWN = re.compile(rb"return\s++self\.(\w++)\(")
_HEAD = re.compile(rb"self\.lm_head\s*(?::|=(?!=))")
_DECODER = re.compile(rb"self\.(?:" + b"|".join(a.encode() for a in DECODER_ATTRS) + rb")\s*=(?!=)\s*([\w.]+)")
_DEFS = tuple(b"def " + m.encode() for m in OWNER_MEMBERS)


def may_hold_owner(path: Path, index: ClassIndex) -> bool:
    """Bytes test: can a class of this file be an owner with a gap? (No false negatives
    for what `owner_findings` reports: a class is dropped only if it has both members, is a
    draft, is neither named after EntryClass (in any of the files) nor a base of any class, defines a forward
    without a logits call, holds a `*ForCausalLM` that is not a class of the given files
    whose own body assigns no head, or holds a class of the given files whose own body
    defines a forward that makes no fresh collection and calls no other forward.)"""
    raw = index.raws[path]
    if b"lm_head" not in raw or b"logits_processor" not in raw:
        return False
    entries = raw[raw.find(b"EntryClass"):] if b"EntryClass" in raw else b""
    listed: set[bytes] | None = None  # the words after EntryClass (`\bname\b` there), found once needed
    for name, start, end in index.by_path.get(path, []):
        if not _HEAD.search(raw, start, end) or all(raw.find(d, start, end) >= 0 for d in _DEFS):
            continue
        if raw.find(b"def forward", start, end) >= 0 and raw.find(b"logits_processor(", start, end) < 0:
            continue  # its own forward computes no logits: not an owner
        if name not in index.subclasses:
            if listed is None:
                listed = set(_WORD.findall(entries))
            if name not in listed and name not in index.registered_anywhere():
                continue  # neither registered (here or by another file) nor a base of anything
        if is_draft_name(name.decode(), path):
            continue
        held = [v.rsplit(b".", 1)[-1] for v in _DECODER.findall(raw, start, end)]
        bodies = [index.body(h, path) or index.body(h) for h in held]
        if any(_whole_model(h, body) for h, body in zip(held, bodies, strict=True)):
            continue  # holds a whole language model: a wrapper, not an owner
        if any(not _never_collects(body) for body in bodies):
            return True
    return False


def _whole_model(name: bytes, body: bytes | None) -> bool:
    """A held `*ForCausalLM` that is a language model by its text: defined outside the given
    files, or its body assigns a head. A decoder body spelled so (0.5.21's
    qwen3_5.Qwen3_5ForCausalLM: layers, no head) passes, for the owner analysis to judge."""
    return name.endswith(b"ForCausalLM") and (body is None or _HEAD.search(body) is not None
                                              or b"self.logits_processor" in body)


def _never_collects(body: bytes | None) -> bool:
    """The body defines forward, and its forward neither returns (within a few lines of a
    `return`) a local made a fresh collection (`= []`, `= AuxHiddenStateList(...)`,
    `= AuxHiddenStatePacker.for_batch(...)`: what a decoder gathers aux hidden states into,
    capture_chain.py), nor calls another forward, nor returns what a method of its class returns."""
    if body is None or b"def forward" not in body:
        return False
    start = body.find(b"def forward")
    end = body.find(b"\n    def ", start + 1)
    forward = body[start:end if end >= 0 else len(body)]
    if b".forward(" in forward:
        return False
    if any(b"def " + name + b"(" in body for name in _RETURNS_OWN.findall(forward)):
        return False
    return not any(re.search(rb"return\b[\s\S]{0,200}?\b" + name + rb"\b", forward)
                   for name in set(_FRESH.findall(forward)))


@dataclass(frozen=True)
class OwnerGap:
    """One owner lacking members, as `support` and the rule both see it."""

    owner: Owner
    cls: ClassEntity
    missing: tuple[str, ...]
    entries: tuple[tuple[ClassEntity, bool], ...] = ()  # registered classes inheriting the gap (in EntryClass?)


CODES = (CODE, NO_FIX_CODE)
FIX = plan_owner_file  # EGL040's fix: the members as the sibling writes them
SUBJECTS = "owner classes"


def _wanted(context: Context) -> dict[str, InterfaceMethod]:
    """The owner members the selected packs ask for, in the order the fix writes them."""
    asked = {m.name: m for m in context.methods}
    return {name: asked[name] for name in OWNER_MEMBERS if name in asked}


SUBJECT_TEXT = ASSIGNS_DECODER  # a subject assigns `self.model`: other classes need not be parsed


def files(context: Context) -> list[Path]:
    """The given files whose classes `subjects` reads: those that pass the bytes test."""
    if CAPTURE_HOOK not in _wanted(context):
        return []  # the capture path is what makes an owner's gap an EAGLE-3 gap
    index = context.memo("owner.index", lambda: ClassIndex(context.raws))
    return context.memo("owner.files", lambda: [path for path in context.raws if may_hold_owner(path, index)])


def subjects(context: Context) -> list[ClassEntity]:
    """Classes of the given files that assign a decoder attribute, are no draft model,
    and whose file passes the bytes test."""
    out = []
    for path in files(context):
        mod = context.project.summary(path, context.raws[path])
        if mod is None:
            continue
        for info in mod.classes_matching(SUBJECT_TEXT):
            if not any(a in info.self_assigns for a in DECODER_ATTRS):
                continue
            cls = ClassEntity(mod.path, info.name)
            if not is_draft(context.resolver, cls):
                out.append(cls)
    return out


def check(context: Context, cls: ClassEntity) -> list[Finding]:
    """cls's findings, if it owns lm_head, its decoder collects, and a served model has its gap;
    and those of registered subclasses that pass it another decoder (their own verdict)."""
    wanted = _wanted(context)
    resolver = context.resolver
    analysis = owner_analysis(resolver)
    index = context.memo("owner.index", lambda: ClassIndex(context.raws))
    registry = context.memo("owner.registry", lambda: Registry(resolver, context.project, index))
    gap = owner_gap(analysis, cls, tuple(wanted))
    if gap is None:
        return []
    out: list[Finding] = []
    for entry in registry.choosers(gap):
        own = _chooser_gap(analysis, entry, tuple(wanted))
        out += _findings(analysis, own, wanted) if own else _shield(analysis, gap, entry, wanted)
    if not gap.owner.head or gap.owner.collects is not True or not analysis.computes_logits(cls):
        return out
    registered = registry.registered(gap)
    if registered is None:
        return out
    out += _findings(analysis, registered, wanted)
    for entry, _ in registered.entries:  # a served subclass whose own forward drops what the member turns on
        if entry != cls and CAPTURE_HOOK in gap.missing and analysis.resolver.defines(entry, "forward"):
            out += _own_forward(analysis, gap, entry, wanted)
    return out


def _own_forward(analysis: OwnerAnalysis, gap: OwnerGap, entry: ClassEntity,
                 wanted: dict[str, InterfaceMethod]) -> list[Finding]:
    """A registered subclass that will inherit the capture member the fix writes into its base,
    but runs a forward of its own that does not hand the aux states to its logits processor
    (MiMoV2ASR over MiMo): its finding, whose fix unpacks and passes them there."""
    if not writes_capture(analysis, gap.owner, gap.missing):
        return []
    plan: ClassPlan | None = None
    try:
        plan = plan_class(analysis, replace(gap.owner, cls=entry), (CAPTURE_HOOK,))
    except NotFixable as exc:
        reason = str(exc)
    else:
        reason = plan.refusals.get(CAPTURE_HOOK, "")
        if not plan.edits and not reason:
            return []  # its forward already unpacks and passes them
    text = own_forward_text(analysis.resolver.info(entry).name, gap.cls, gap.owner.decoders[0].cls)
    return [_inherited(analysis, gap, entry, gap.owner, NO_FIX_CODE if reason else CODE, wanted, text,
                       OwnerMember(CAPTURE_HOOK, plan) if plan is not None and not reason else None, reason or None)]


def _shield(analysis: OwnerAnalysis, gap: OwnerGap, entry: ClassEntity,
            wanted: dict[str, InterfaceMethod]) -> list[Finding]:
    """A registered subclass that passes its base a decoder collecting nothing, where the fix
    writes the capture member into the base: the subclass would inherit a member that captures
    nothing (a broken chain the next check reports). Its own finding, whose fix writes it a
    member that raises AttributeError, as the class does now when the engine calls it."""
    own = analysis.owner(entry)
    if own is None or CAPTURE_HOOK not in gap.missing or own.collects is not False or not gap.owner.head \
            or gap.owner.collects is not True or has_member(analysis.resolver, entry, CAPTURE_HOOK) \
            or not writes_capture(analysis, gap.owner, gap.missing):
        return []
    intent: OwnerMember | None = None
    refused: str | None = None
    try:  # the member that raises, planned as the fix writes it
        intent = OwnerMember(CAPTURE_HOOK, plan_class(analysis, replace(own, cls=entry), (CAPTURE_HOOK,)))
    except NotFixable as exc:
        refused = str(exc)
    text = shield_text(analysis.resolver.info(entry).name, gap.cls, own.decoders[0].cls, own.decoders[0].why)
    return [_inherited(analysis, gap, entry, own, CODE, wanted, text, intent, refused)]


def _inherited(analysis: OwnerAnalysis, gap: OwnerGap, entry: ClassEntity, owner: Owner, code: str,
               wanted: dict[str, InterfaceMethod], text: tuple[str, tuple[str, ...], str],
               intent: OwnerMember | None, refusal: str | None = None) -> Finding:
    """A registered subclass's own finding about the capture member it would inherit from the
    base the fix writes it into (`text`: what stands in its way, and what the fix does; `intent`:
    the plan of the subclass's fix, None where it has none)."""
    info = analysis.resolver.info(entry)
    message, help_lines, title = text
    return Finding(os.path.abspath(entry.path), info.line, info.column, code, message, help=help_lines,
                   fix_title=title, fix_refusal=refusal, class_name=info.name,
                   wrapped_class=owner.decoders[0].cls.qualname, method=CAPTURE_HOOK,
                   interface=wanted[CAPTURE_HOOK].interface, wrapper_attribute=owner.attr, entry_class=True,
                   intent=intent)


def _chooser_gap(analysis: OwnerAnalysis, entry: ClassEntity, members: tuple[str, ...]) -> OwnerGap | None:
    """A registered subclass whose constructor passes its base another decoder (resolve.py),
    judged as an owner of that decoder; the members are written into the subclass."""
    own = analysis.owner(entry)
    if own is None or not own.head or own.collects is not True or not analysis.computes_logits(entry):
        return None
    missing = tuple(m for m in members if not has_member(analysis.resolver, entry, m))
    return OwnerGap(replace(own, cls=entry), entry, missing, ((entry, True),)) if missing else None


def owner_gap(analysis: OwnerAnalysis, cls: ClassEntity, members: tuple[str, ...]) -> OwnerGap | None:
    """cls as an owner that lacks some of `members`, if it assigns its decoder itself."""
    missing = tuple(m for m in members if not has_member(analysis.resolver, cls, m))
    if not missing:
        return None
    owner = analysis.owner(cls)
    if owner is None or owner.cls != cls:
        return None
    return OwnerGap(owner, cls, missing)


class Registry:
    """Which classes SGLang loads as served models: EntryClass entries and their bases."""

    def __init__(self, resolver: Resolver, project: Project, index: ClassIndex):
        self.resolver, self.project, self.index = resolver, project, index

    def registered(self, gap: OwnerGap) -> OwnerGap | None:
        """The gap with the registered classes that have it, or None if no served model has it
        (a component, a base nobody registers: the engine never calls it)."""
        resolver, cls = self.resolver, gap.cls
        entries = [(e, True) for e in self.entries_of(cls) if not is_draft(resolver, e)]
        entries = [(e, i) for e, i in entries if e == cls or not chooses_decoder(resolver, e, cls, gap.owner.parameter)]
        entries = [(e, i) for e, i in entries if any(not has_member(resolver, e, m) for m in gap.missing)]
        return replace(gap, entries=tuple(entries)) if entries else None

    def choosers(self, gap: OwnerGap) -> list[ClassEntity]:
        """Registered subclasses that hold another decoder than gap's class only because their
        constructor passes it up (one assigning a decoder itself is an owner of its own)."""
        resolver, cls = self.resolver, gap.cls
        out = []
        for entry in self.entries_of(cls):
            mro = resolver.mro(entry)
            if entry == cls or is_draft(resolver, entry) or any(
                    a in resolver.info(c).self_assigns for c in mro[:mro.index(cls)] for a in DECODER_ATTRS):
                continue
            if chooses_decoder(resolver, entry, cls, gap.owner.parameter):
                out.append(entry)
        return out

    def entries_of(self, cls: ClassEntity) -> list[ClassEntity]:
        """cls itself if registered, and every registered class (served.py) that subclasses it,
        among the files that define a class naming cls (or such a subclass) among its bases."""
        names, todo, files = set(), [cls.qualname.rsplit(".", 1)[-1].encode()], set()
        while todo:
            name = todo.pop()
            names.add(name)
            for sub, path in self.index.subclasses.get(name, []):
                if not is_draft_name(sub.decode(), path):
                    files.add(path)
                    if sub not in names:
                        todo.append(sub)
        files.add(Path(cls.path))
        paths = {str(p) for p in files}
        registered = sorted((e for e in served(self.resolver, cls.path).classes if e.path in paths),
                            key=lambda e: (e.path, self.resolver.info(e).line))
        return [e for e in registered if cls in self.resolver.mro(e)]


def chooses_decoder(resolver: Resolver, sub: ClassEntity, owner: ClassEntity, parameter: str | None) -> bool:
    """A subclass whose instances hold another decoder than the owner's: it assigns one
    itself, its constructor passes another class up (resolve.py), or (where the decoder
    is the default of a parameter of another method) it has its own __init__, which may
    pass another class: its verdict is not the owner's."""
    for c in resolver.mro(sub):
        if c == owner:
            break
        info = resolver.info(c)
        if any(a in info.self_assigns for a in DECODER_ATTRS) or (parameter and "__init__" in info.methods):
            return True
    return any(held_classes(resolver, sub, a) != held_classes(resolver, owner, a)
               for a in DECODER_ATTRS if a in resolver.info(owner).self_assigns)


def _findings(analysis: OwnerAnalysis, gap: OwnerGap, wanted: dict[str, InterfaceMethod]) -> list[Finding]:
    resolver = analysis.resolver
    info = resolver.info(gap.cls)
    decoder = gap.owner.decoders[0]
    plan: ClassPlan | None = None
    reason: str | None = None
    try:
        plan = plan_class(analysis, gap.owner, gap.missing)
    except NotFixable as exc:
        reason = str(exc)
    subclasses = subclass_labels(gap.cls, (e for e, _ in gap.entries if e != gap.cls))
    out = []
    for member in gap.missing:
        refused = plan.refusals.get(member) if plan else None
        plan_here = None if refused else plan
        why = refused or reason
        sibling = plan_here.siblings.get(member) if plan_here else None
        contract = plan_here.contracts.get(member) if plan_here else None
        message, help_lines = owner_text(info.name, member, gap.owner.attr, decoder.cls, decoder.why, subclasses)
        out.append(Finding(
            os.path.abspath(gap.cls.path), info.line, info.column, CODE if plan_here else NO_FIX_CODE, message,
            help=help_lines, fix_title=fix_title(sibling, contract), fix_refusal=None if plan_here else why,
            class_name=info.name, wrapped_class=decoder.cls.qualname, method=member,
            wrapped_path=os.path.abspath(sibling.member.owner.path) if sibling else None,
            wrapped_line=sibling.member.line if sibling else None,
            provider_class=sibling.member.owner.qualname if sibling else None,
            interface=wanted[member].interface, wrapper_attribute=gap.owner.attr,
            entry_class=any(is_entry for _, is_entry in gap.entries), subclasses=subclasses,
            intent=OwnerMember(member, plan_here) if plan_here else None))
    return out


# -- the messages of this family's codes, each built here only ------------------------------------

def owner_text(name: str, member: str, attr: str, decoder: ClassEntity, collects: str,
               subclasses: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """EGL040/EGL041: the member the owner lacks; the help says what its decoder collects (`collects`:
    the owner analysis's `why`), and who inherits the gap."""
    return (f"{name} lacks {member}, which the engine calls for EAGLE-3: it owns lm_head and holds "
            f"self.{attr} = {decoder.qualname}", (collects, *inherited_by(subclasses)))


def fix_title(sibling: Sibling | None, contract: str | None) -> str | None:
    """What `eaglelint fix` writes for EGL040: the member as the decoder family's sibling writes
    it, or read off the decoder (None: there is no fix, EGL041, and the finding says why)."""
    if sibling is not None:
        return (f"write it as {sibling.cls.qualname} ({Path(sibling.member.owner.path).name}:{sibling.member.line}) "
                f"writes it for the same decoder family")
    return f"write it from its decoder ({contract})" if contract else None


def own_forward_text(name: str, base: ClassEntity, decoder: ClassEntity) -> tuple[str, tuple[str, ...], str]:
    """EGL040/EGL041 of a registered subclass that would inherit the capture member the fix writes
    into its base (for the base's decoder), but whose own forward drops what the member turns on;
    and the fix's title."""
    return (f"{name}.forward does not hand its logits processor the aux hidden states that {CAPTURE_HOOK} turns on",
            (f"{name} would inherit {CAPTURE_HOOK} from {base.qualname} once eaglelint fix writes it there "
             f"(its decoder {decoder.qualname} collects them)",),
            "unpack the aux hidden states in its forward and pass them to its logits processor")


def shield_text(name: str, base: ClassEntity, decoder: ClassEntity, collects: str,
                ) -> tuple[str, tuple[str, ...], str]:
    """EGL040 of a registered subclass that passes its base a decoder collecting nothing (`collects`:
    why it collects nothing), where the fix writes the capture member into the base; and the
    fix's title."""
    return (f"{name} would inherit from {base.qualname} a {CAPTURE_HOOK} that captures nothing",
            (f"eaglelint fix writes {CAPTURE_HOOK} into {base.qualname}, but {name} passes it {decoder.qualname}, "
             f"whose {collects}",),
            f"give {name} a {CAPTURE_HOOK} that raises AttributeError, as the engine's call does now")
