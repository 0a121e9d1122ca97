"""vLLM wrappers, found by what they hold and judged as vLLM serves them: EGL030/EGL031/EGL010.

Why its own discovery: a vLLM wrapper holds its language model under any name
(`self.language_model`, `self.llm` in the MiniCPM-V/O family, `self.decoder`), or
one attribute further down (`self.model.decoder`), and usually builds it through a
loader and the registry (vllm_registry.py). So every class of a file that builds
models (it mentions `vllm_config`, which every vLLM model constructor takes) is read:
the first attribute whose class lists the marker, else one whose class's attribute
does, is its language model. Only classes vLLM can serve count: those the registry
names (drafts aside), or, for a base, its scanned subclasses that the registry names;
a class that lists the marker already has nothing missing, whatever it holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.capture.wrapper_attrs import DEFAULT_WRAPPER_ATTRS
from ..analysis.python.project import Project
from ..analysis.python.resolve import ClassEntity, Resolver
from ..analysis.sglang.owners import OwnerAnalysis
from ..analysis.sglang.wrappers import wrapped_candidates
from ..analysis.vllm.marker import (
    DEFAULT_LAYERS,
    SETTER,
    Held,
    delegations,
    listers,
    marker_in_mro,
    satisfies_structurally,
)
from ..analysis.vllm.vllm_registry import is_checkpoint_choice, registry_for, served, text_models
from ..findings import Finding
from ..fix.intent import Forward, MarkerBase
from ..fix.marker import plan_marker_file
from ..packs import Interface
from .context import Context
from .delegation import UNRESOLVED
from .labels import inherited_by, subclass_labels

if TYPE_CHECKING:
    from ..analysis.capture.links import Broken
    from ..analysis.vllm.vllm_chain import VllmChainAnalysis

CODE = "EGL030"  # fixable: the marker base (and the forwards it needs)
DECODER_CODE = "EGL031"  # the decoder would not capture: no automatic fix
MODEL_FILE = b"vllm_config"


@dataclass
class Plan:
    """What one wrapper class needs: the marker, and the members to forward."""

    wrapper: ClassEntity
    held: Held
    lm: ClassEntity
    marker: ClassEntity
    delegate: list[str]
    # where the checkpoint's config picks the language model: every class it may be (else empty)
    candidates: tuple[ClassEntity, ...] = ()
    sources: dict[str, ClassEntity] = field(default_factory=dict)  # member -> the candidate it is forwarded as


@dataclass
class Scan:
    resolver: Resolver
    project: Project
    raws: dict[Path, bytes]
    marker: str
    wrapper_attrs: tuple[str, ...] = DEFAULT_WRAPPER_ATTRS
    _held: dict = field(default_factory=dict)
    _chains: VllmChainAnalysis | None = None
    _served: dict = field(default_factory=dict)

    @property
    def chains(self) -> VllmChainAnalysis:
        """The capture chains, which decide EGL031: whether the language model itself would capture."""
        if self._chains is None:
            from ..analysis.vllm.vllm_chain import VllmChainAnalysis  # only vLLM's models need it

            self._chains = VllmChainAnalysis(self.resolver, OwnerAnalysis(self.resolver))
        return self._chains

    def served(self, cls: ClassEntity) -> set[ClassEntity] | None:
        """Classes the registry of cls's tree serves; None outside a vLLM tree (all count)."""
        registry = registry_for(self.project, cls.path)
        if registry is None:
            return None
        if registry.path not in self._served:
            self._served[registry.path] = served(self.resolver, registry)
        return self._served[registry.path]

    def held(self, cls: ClassEntity) -> Held | None:
        """The language model cls holds (one that lists the marker, one or two attributes
        down), else an unresolved model built by a loader or under a wrapper attribute."""
        if cls not in self._held:
            self._held[cls] = self._find_held(cls)
        return self._held[cls]

    def _find_held(self, cls: ClassEntity) -> Held | None:
        resolver = self.resolver
        first: list[Held] = []
        unresolved = None
        for attr in _attrs(resolver, cls):
            classes, reasons = wrapped_candidates(resolver, cls, attr)
            held = Held((attr,), tuple(classes), tuple(reasons))
            if listers(resolver, held, self.marker):
                return held
            first.append(held)
            if unresolved is None and reasons and (attr in self.wrapper_attrs or _loaded(resolver, cls, attr)):
                unresolved = held
        for outer in first:
            for mid in outer.classes:
                if mid == cls or marker_in_mro(resolver, mid, self.marker) is not None:
                    continue
                for attr in _attrs(resolver, mid):
                    classes, reasons = wrapped_candidates(resolver, mid, attr)
                    held = Held((*outer.path, attr), tuple(classes), tuple(reasons))
                    if listers(resolver, held, self.marker):
                        return held
        return unresolved

    def candidates(self, cls: ClassEntity, held: Held) -> tuple[ClassEntity, ...] | None:
        """Where only the checkpoint's config names the held model's architecture (on some
        path at least: the literals written on the others stay candidates), every class vLLM
        may build for it; None where the choice is not the checkpoint's (or not only), or
        no text model is registered."""
        if not held.reasons or not all(is_checkpoint_choice(r) for r in held.reasons):
            return None
        registry = registry_for(self.project, cls.path)
        models = text_models(self.resolver, registry) if registry is not None else []
        return tuple(dict.fromkeys([*held.classes, *models])) if models else None

    def plan(self, cls: ClassEntity) -> Plan | None:
        held = self.held(cls)
        if held is None:
            return None
        candidates = self.candidates(cls, held)
        if candidates is not None:
            held = Held(held.path, candidates, ())
        found = listers(self.resolver, held, self.marker)
        if not found:
            return None
        lm, marker = found[0]
        # where the config picks among several classes, forward what any of them needs
        sources: dict[str, ClassEntity] = {}
        for c, m in found:
            for name in delegations(self.resolver, cls, held, c, m):
                member = self.resolver.find_member(c, name)
                if name not in sources or member is not None and member.owner != m:
                    sources[name] = c  # the signature of a class's own member, where one has it
        delegate = [n for n in (DEFAULT_LAYERS, SETTER) if n in sources]
        return Plan(cls, held, lm, marker, delegate, candidates or (), sources)

    def subclasses(self, cls: ClassEntity) -> list[ClassEntity]:
        """Scanned subclasses of cls that do not assign the held attribute themselves."""
        out = []
        needle = cls.qualname.rsplit(".", 1)[-1].encode()
        for path, raw in self.raws.items():
            if needle not in raw:
                continue
            mod = self.project.summary(path, raw)
            if mod is None:
                continue
            for info in mod.classes.values():
                sub = ClassEntity(mod.path, info.name)
                if sub != cls and cls in self.resolver.mro(sub):
                    out.append(sub)
        return out


def _attrs(resolver: Resolver, cls: ClassEntity) -> list[str]:
    seen: dict[str, None] = {}
    for c in resolver.mro(cls):
        seen.update(dict.fromkeys(resolver.info(c).self_assigns))
    return list(seen)


def _loaded(resolver: Resolver, cls: ClassEntity, attr: str) -> bool:
    """Whether `self.<attr>` is built by a vLLM loader call (a call Ref named after it)."""
    owner = next((c for c in resolver.mro(cls) if attr in resolver.info(c).self_assigns), cls)
    return any(v.kind == "call" and v.name for a in resolver.info(owner).self_assigns[attr] for v in a.values)


CODES = (CODE, DECODER_CODE)
SUBJECTS = "vllm-models"  # every class of a file that builds models: its own discovery
SUBJECT_TEXT = None  # every class of those files


def _marker_packs(context: Context) -> list[Interface]:
    return [i for i in context.interfaces if i.engine == "vllm" and i.marker]


def files(context: Context) -> list[Path]:
    """The given files that build vLLM models (they mention `vllm_config`): `subjects` reads them."""
    if not _marker_packs(context):
        return []
    return [path for path, raw in context.raws.items() if MODEL_FILE in raw]


def subjects(context: Context) -> list[ClassEntity]:
    """Every class of the given files that build vLLM models."""
    out: list[ClassEntity] = []
    for path in files(context):
        mod = context.project.summary(path, context.raws[path])
        if mod is not None:
            out += [ClassEntity(mod.path, info.name) for info in mod.classes.values()]
    return out


def scan_of(context: Context, iface: Interface) -> Scan:
    """The run's scan for one marker pack (what each class holds, what the registry serves)."""
    return context.memo(f"marker.scan.{iface.name}", lambda: Scan(
        context.resolver, context.project, context.raws, iface.marker, context.held_names))


def marked_targets(context: Context) -> list[tuple[ClassEntity, Interface]]:
    """Classes of the given vLLM model files that list the marker (or inherit it) and that
    vLLM serves as a target (every one outside a vLLM tree): the capture chain judges them."""
    out = []
    for iface in _marker_packs(context):
        scan = scan_of(context, iface)
        for cls in subjects(context):
            if marker_in_mro(scan.resolver, cls, iface.marker) in (None, cls):
                continue  # no marker, or the protocol itself
            served = scan.served(cls)
            if served is None or cls in served:
                out.append((cls, iface))
    return out


def check(context: Context, cls: ClassEntity) -> list[Finding]:
    """The marker findings of one class, for each selected pack with a marker protocol."""
    scanned = context.memo("marker.scanned", lambda: {os.path.abspath(p) for p in context.raws})
    out: list[Finding] = []
    for iface in _marker_packs(context):
        scan = scan_of(context, iface)
        held = scan.held(cls)
        if held is not None and not _judged_by_base(scan, cls, held, scanned):
            subs = [s for s in scan.subclasses(cls) if scan.held(s) == held]
            out += _one(scan, cls, held, subs, iface)
    return out


def _judged_by_base(scan: Scan, cls: ClassEntity, held: Held, scanned: set[str]) -> bool:
    """A class that holds what a scanned base holds (same attribute, same classes) is
    named in that base's finding; one whose choice differs (a builder method or class
    attribute it overrides) is judged on its own."""
    return any(base.path in scanned and scan.held(base) == held for base in scan.resolver.mro(cls)[1:])


def _one(scan: Scan, cls: ClassEntity, held: Held, subs: list[ClassEntity], iface: Interface) -> list[Finding]:
    resolver = scan.resolver
    if marker_in_mro(resolver, cls, iface.marker) is not None:
        return []  # nothing is missing, whatever the language model is
    served = scan.served(cls)
    lacking = [s for s in subs if marker_in_mro(resolver, s, iface.marker) is None
               and (served is None or s in served)]
    if served is not None and cls not in served and not lacking:
        return []  # never served as it is: a component, or every served subclass lists the marker
    info = resolver.info(cls)
    labels = subclass_labels(cls, lacking)
    common: dict[str, Any] = dict(class_name=info.name, interface=iface.name, wrapper_attribute=held.attr,
                                  entry_class=served is not None, subclasses=labels)
    where = os.path.abspath(cls.path), info.line, info.column
    plan = scan.plan(cls)
    if plan is None:
        if not held.reasons or scan.candidates(cls, held) is not None:
            return []  # no class it may hold lists the marker: there is nothing to add
        message, help_lines = unresolved_text(info.name, held, iface.marker, labels)
        return [Finding(*where, UNRESOLVED, message, help=help_lines, **common)]
    if satisfies_structurally(resolver, cls, plan.marker):
        return []
    if plan.candidates:
        return [_from_checkpoint(resolver, plan, held, iface.marker, info.name, labels, where, common)]
    mixed = _mixed_choice(resolver, held, iface.marker)
    if mixed is not None:
        message, help_lines = mixed_text(info.name, held, iface.marker, mixed, labels)
        return [Finding(*where, UNRESOLVED, message, help=help_lines, **common)]
    lister = next(c for c in resolver.mro(plan.lm) if plan.marker in resolver.bases(c)[0])
    at = f"{Path(lister.path).name}:{resolver.info(lister).line}"
    via = "" if lister == plan.lm else f" via {lister.qualname}"
    lm = f"{plan.lm.qualname}{via}, {at}"
    chain = scan.chains.chain(plan.lm)  # what the marker would start: the language model's own chain
    if chain is not None and chain.broken:
        broken = chain.broken[0]
        place = broken.reader or broken.writer or chain.member
        message, help_lines = decoder_text(info.name, held, iface.marker, lm, broken, labels)
        return [Finding(*where, DECODER_CODE, message, help=help_lines,
                        wrapped_class=plan.lm.qualname, wrapped_path=os.path.abspath(place.cls.path),
                        wrapped_line=place.line, provider_class=chain.decoder.qualname if chain.decoder else
                        place.cls.qualname, **common)]
    message = f"{info.name} does not list {iface.marker} in its bases, while its self.{held.attr} ({lm}) does"
    help_lines = (*_among(held), REFUSED)
    if plan.delegate:
        help_lines += (f"forward {' and '.join(plan.delegate)} to self.{held.attr} too: "
                       f"{_delegation_reason(resolver, plan)}",)
    return [Finding(*where, CODE, message, help=(*help_lines, *inherited_by(labels)),
                    fix_title=fix_title(iface.marker, plan.delegate, held.attr),
                    wrapped_class=plan.lm.qualname, wrapped_path=os.path.abspath(lister.path),
                    wrapped_line=resolver.info(lister).line, provider_class=lister.qualname,
                    fix_refusal=_header_refusal(info), intent=_intent(resolver, plan, lister, iface.marker),
                    **common)]


def _from_checkpoint(resolver: Resolver, plan: Plan, held: Held, marker: str, name: str, labels: tuple[str, ...],
                     where: tuple[str, int, int], common: dict[str, Any]) -> Finding:
    """EGL030 where the checkpoint's config picks the language model: without the marker,
    vLLM refuses EAGLE-3 for the wrapper whatever the checkpoint names, so the missing
    marker is the gap; the finding says how many of the classes it may build list it."""
    listing = [c for c, _ in listers(resolver, Held(held.path, plan.candidates, ()), marker)]
    lister = next(c for c in resolver.mro(plan.lm) if plan.marker in resolver.bases(c)[0])
    known = f"{', '.join(c.qualname for c in held.classes)} or " if held.classes else ""
    examples = ", ".join(c.qualname for c in listing[:3]) + (", ..." if len(listing) > 3 else "")
    message = (f"{name} does not list {marker} in its bases, while its self.{held.attr} may be any of "
               f"{len(plan.candidates)} registered text models, {len(listing)} of which list it")
    help_lines: tuple[str, ...] = (f"self.{held.attr} is {known}{held.reasons[0]}",
                                   f"those that list {marker}: {examples}",
                                   f"{REFUSED} whatever the checkpoint names")
    if plan.delegate:
        own = []
        for member in plan.delegate:
            defining = [c.qualname for c in plan.candidates for m in [resolver.find_member(c, member)]
                        if m is not None and m.owner.qualname != marker]
            if defining:
                verb = "defines its" if len(defining) == 1 else "define their"
                own.append(f"{len(defining)} of them {verb} own {member} ({', '.join(defining[:2])}"
                           f"{', ...' if len(defining) > 2 else ''})")
        why = "; ".join(own) + ", which the protocol's default on the wrapper would bypass" if own \
            else _delegation_reason(resolver, plan)
        help_lines += (f"forward {' and '.join(plan.delegate)} to self.{held.attr} too, raising where the model "
                       f"held lacks them: {why}",)
    return Finding(*where, CODE, message, help=(*help_lines, *inherited_by(labels)),
                   fix_title=fix_title(marker, plan.delegate, held.attr),
                   wrapped_class=plan.lm.qualname, wrapped_path=os.path.abspath(lister.path),
                   wrapped_line=resolver.info(lister).line, provider_class=lister.qualname,
                   fix_refusal=_header_refusal(resolver.info(plan.wrapper)),
                   intent=_intent(resolver, plan, lister, marker), **common)


def _intent(resolver: Resolver, plan: Plan, lister: ClassEntity, marker: str) -> MarkerBase:
    """EGL030's fix as the scan planned it: the marker, imported as `lister` (the class of the
    language model's MRO that lists it) imports it, and each member to forward with the
    signature of the class it is forwarded as."""
    forwards = []
    for name in plan.delegate:
        source = plan.sources.get(name, plan.lm)
        member = resolver.find_member(source, name)
        every = all(resolver.find_member(c, name) is not None for c in plan.candidates)
        forwards.append(Forward(name, source, member.function if member is not None else None, every))
    return MarkerBase(marker, lister, plan.held.attr, tuple(forwards), bool(plan.candidates))


# -- the messages of this family's codes, each built here only ------------------------------------

REFUSED = "vLLM's supports_eagle3() refuses the wrapper for EAGLE-3"


def fix_title(marker: str, delegate: list[str], attr: str) -> str:
    """What `eaglelint fix` writes for EGL030: the marker base, and the forwards the plan names."""
    forward = f", and forward {' and '.join(delegate)} to self.{attr}" if delegate else ""
    return f"add {marker} to its bases{forward}"


def unresolved_text(name: str, held: Held, marker: str, subclasses: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """EGL010 for a vLLM wrapper whose held class cannot be resolved: the classes known (none
    lists the marker) and the reasons."""
    known = f"{', '.join(c.qualname for c in held.classes)} (none lists {marker}) or " if held.classes else ""
    none = " (and no registered text model can be read from vLLM's registry to choose from)" \
        if all(is_checkpoint_choice(r) for r in held.reasons) else ""
    return (f"{name} holds self.{held.attr}, but its class cannot be resolved",
            (f"{known}{'; '.join(held.reasons[:3])}{none}", *inherited_by(subclasses)))


def mixed_text(name: str, held: Held, marker: str, mixed: str, subclasses: tuple[str, ...],
               ) -> tuple[str, tuple[str, ...]]:
    """EGL010 for a vLLM wrapper whose held class is chosen when the model is built, and the
    marker is right for only some of the choices."""
    return (f"{name} holds self.{held.attr}, whose class is chosen when the model is built",
            (mixed, f"listing {marker} is right only for some", *inherited_by(subclasses)))


def decoder_text(name: str, held: Held, marker: str, lm: str, broken: Broken, subclasses: tuple[str, ...],
                 ) -> tuple[str, tuple[str, ...]]:
    """EGL031: the marker would not help, the language model's own capture chain breaks."""
    return (f"{name} does not list {marker}, but its self.{held.attr} ({lm}), which lists it, breaks its own "
            f"capture chain at link {broken.link.letter}",
            (broken.message, "fix that first: listing the marker would not make it capture",
             *inherited_by(subclasses)))


def _among(held: Held) -> tuple[str, ...]:
    if len(held.classes) < 2:
        return ()
    return (f"as does each class the config may pick: {', '.join(c.qualname for c in held.classes)}",)


def _mixed_choice(resolver: Resolver, held: Held, marker: str) -> str | None:
    """Why the marker is not right whatever the config picks (some candidates do not
    list it, or the checkpoint may name another class), or None where every one does."""
    listing = {c for c, _ in listers(resolver, held, marker)}
    others = [c.qualname for c in held.classes if c not in listing]
    if not others and not held.reasons:
        return None
    parts = [f"{marker} is listed by {', '.join(c.qualname for c in held.classes if c in listing)}"]
    if others:
        parts[0] += f", not by {', '.join(others)}"
    parts += list(held.reasons[:2])
    return "; ".join(parts)


def _delegation_reason(resolver: Resolver, plan: Plan) -> str:
    own = [(n, m) for n in plan.delegate for m in [resolver.find_member(plan.sources.get(n, plan.lm), n)]
           if m and m.owner != plan.marker]
    if own:
        name, member = own[0]
        return (f"{member.owner.qualname} defines its own {name} ({Path(member.owner.path).name}:{member.line}), "
                f"which the protocol's default on the wrapper would bypass")
    return "the protocol's defaults reach only get_language_model() or self.language_model, then its .model"


def _header_refusal(info) -> str | None:
    """Why fix/marker.py cannot append the marker to this class header, or None."""
    if not info.bases or info.header_keywords:
        return "the class has no bases, or keyword arguments in its header; add the base by hand"
    return None


FIX = plan_marker_file  # EGL030's fix: the marker base and the forwards the scan's plan names
