"""The support matrix: for every registered model class and pack, can it serve as a target?

Why from `check`'s own findings: "does model X support EAGLE-3 in release Y?" must get
the answer `check` and `fix` act on. A class with a finding is a gap (a delegation
eaglelint can write, an owner that can implement the members, or an unresolved class);
a class without one either has every member, or the same analysis says why it cannot
have them (its decoder does not collect aux hidden states, its language model lacks
them too), or the row says what eaglelint could not tell.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..analysis.capture.wrapper_attrs import DEFAULT_HELD_ATTR
from ..analysis.python.choices import held_classes
from ..analysis.python.discover import discover
from ..analysis.python.presence import has_member, presence
from ..analysis.python.project import Project
from ..analysis.python.resolve import ClassEntity
from ..analysis.python.summary import ModuleSummary
from ..analysis.sglang.capture_chain import CAPTURE_HOOK, HEAD, LAYER_CONTAINER, LOGITS, CaptureChainAnalysis
from ..analysis.sglang.checkpoint import registry_candidates
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.owners import OwnerAnalysis, checked_analysis
from ..analysis.sglang.served import module_entries
from ..analysis.sglang.wrappers import wrapped_candidates
from ..analysis.syntax.forwarding import forwarded
from ..checks.aux_path import CAPTURES
from ..checks.capture_chain import CODE_BY_LINK
from ..checks.capture_chain import CODES as CHAIN_CODES
from ..checks.delegation import OPTIONAL_CODE, SEVERITY_BY_CALLED_ON
from ..checks.labels import inherited_by
from ..checks.owner import CODE as OWNER_CODE
from ..checks.owner import NO_FIX_CODE as OWNER_NO_FIX_CODE
from ..checks.owner import chooses_decoder
from ..checks.run import DEFAULT_WRAPPER_ATTRS, CheckOptions, check_files
from ..findings import Finding
from ..fix.owner import unverifiable
from ..packs import Interface, InterfaceMethod, load_codes

SUPPORTED = "supported"
FIXABLE = "fixable gap (delegation)"
IMPLEMENTABLE = "implementable (owner)"
DEPENDS = "depends on checkpoint"
NOT_SUPPORTED = "not supported"
UNKNOWN = "unknown"
DRAFT = "draft model"
NOT_APPLICABLE = "not applicable"
STATUSES = (SUPPORTED, FIXABLE, IMPLEMENTABLE, DEPENDS, NOT_SUPPORTED, UNKNOWN, DRAFT, NOT_APPLICABLE)
DELEGATION_CODES = (SEVERITY_BY_CALLED_ON["target"], OPTIONAL_CODE)

# A deployment's answer for a class, or for one model a class may hold: what `support --config`
# says, and what each candidate of a row that depends on the checkpoint says
WORKS = "supported"
AFTER_FIX = "supported after `eaglelint fix --write`"
FAILS = "not supported"
UNDECIDED = "unknown"
VERDICTS = (WORKS, AFTER_FIX, UNDECIDED, FAILS)  # the worse of two verdicts is the later
# candidates named in a row's detail without --verbose; more are counted
NAMED_CANDIDATES = 8


@dataclass(frozen=True)
class Candidate:
    """One model a class may hold, chosen by the checkpoint, and the verdict for a checkpoint
    that gives it: the class's own row and the candidate's, each after `eaglelint fix --write`
    (what `support --config` answers for such a checkpoint)."""

    path: str  # absolute, as Row.path
    name: str
    line: int
    status: str  # the candidate's own matrix row
    verdict: str  # one of VERDICTS
    reason: str
    model_types: tuple[str, ...] = ()  # for a registry lookup: the text_config.model_type values that give it


@dataclass(frozen=True)
class Row:
    path: str  # absolute: the support command shows it relative to the working directory
    entry: str  # the EntryClass entry
    pack: str
    status: str
    detail: str
    # the codes of `check`'s findings for this class that the verdict rests on (a broken capture
    # chain: those of its links): what to act on, and what a test holds the row to
    codes: tuple[str, ...] = ()
    # where the class's model is chosen by the checkpoint among several: the attribute that
    # holds it, and a verdict per model it may be (the status then says what they share, or
    # DEPENDS)
    attribute: str = ""
    candidates: tuple[Candidate, ...] = ()


class HeldVerdict(NamedTuple):
    """Judge.with_held's answer: the verdict, the held model's row and why, the holding class's
    own reason, and whether the held model decides (it is the worse, and not supported)."""

    status: str
    held: Row
    held_reason: str
    own_reason: str
    held_decides: bool


def support_matrix(paths: list[Path], packs: list[Interface], project: Project | None = None) -> list[Row]:
    """One row per registered class and SGLang pack, in file order."""
    return judged(paths, packs, project)[0]


def judged(paths: list[Path], packs: list[Interface],
           project: Project | None = None) -> tuple[list[Row], list[Finding]]:
    """The rows, with the findings of the check run they were read from (the SGLang packs
    among `packs`): one analysis for both, so a test can hold each row to its findings."""
    project = project or Project()
    files = discover(paths).files
    packs = [p for p in packs if p.engine == "sglang"]
    findings = check_files(files, CheckOptions(tuple(packs)), project).findings
    return project.retrying(lambda: _rows(files, packs, project, findings)), findings


def _rows(files: list[Path], packs: list[Interface], project: Project, findings: list[Finding]) -> list[Row]:
    judge = Judge(checked_analysis(project), findings)  # the check's own analysis: it read these classes
    resolver = judge.resolver
    rows: list[Row] = []
    seen: set[ClassEntity] = set()
    for path in files:
        mod = project.summary(path)
        if mod is None:
            continue
        for name in mod.entry_classes:
            entries = [e for e in resolver.lookup(mod.path, name.split(".")[0]) if isinstance(e, ClassEntity)]
            if not entries or "." in name:
                unknown = "the entry cannot be resolved"
                rows += [Row(os.path.abspath(path), name, p.name, UNKNOWN, unknown) for p in packs]
                continue
            for entry in entries:
                if entry not in seen:
                    seen.add(entry)
                    rows += [judge.matrix_row(entry, pack) for pack in packs]
        if _grown(mod):  # `EntryClass += [...]`, `+= other.EntryClass`: the classes it adds
            for entry in module_entries(resolver, mod, project.raw(path), []):
                if entry not in seen:
                    seen.add(entry)
                    rows += [judge.matrix_row(entry, pack) for pack in packs]
    return rows


def dependence(row: Row, verbose: bool = False) -> str:
    """What a row's candidates say, for its detail: how many of the models the checkpoint may
    make self.<attr> work after `eaglelint fix --write`, how many do not, how many are unknown;
    each group named where it has at most NAMED_CANDIDATES models, every one with verbose."""
    if not row.candidates:
        return ""
    groups = (("work", (WORKS, AFTER_FIX)), ("do not", (FAILS,)), ("unknown", (UNDECIDED,)))
    said, counted = [], False
    for label, verdicts in groups:
        names = [c.name for c in row.candidates if c.verdict in verdicts]
        if not names:
            continue
        if verbose or len(names) <= NAMED_CANDIDATES:
            said.append(f"{len(names)} {label} ({', '.join(names)})")
        else:
            said.append(f"{len(names)} {label}")
            counted = True
    more = " (--verbose names them)" if counted else ""
    return f"the checkpoint chooses self.{row.attribute} among {len(row.candidates)} models; after " \
           f"`eaglelint fix --write` {', '.join(said)}{more}"


def _grown(mod: ModuleSummary) -> bool:
    """The module's EntryClass is more than its first assignment (`+=`, `.append`, `[A] + B`),
    whose names alone `entry_classes` holds."""
    return len(mod.entry_refs) > 1


def _codes(findings: list[Finding]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.code for f in findings))


def _methods(findings: list[Finding]) -> list[str]:
    """The members the findings name (each owner and delegation finding names the one it lacks)."""
    return [f.method for f in findings if f.method is not None]


def target_members(pack: Interface) -> list[InterfaceMethod]:
    """What the engine needs on a target model: the required target members (all target
    members where the pack requires none)."""
    targets = [m for m in pack.methods if m.called_on == "target"]
    return [m for m in targets if m.required] or targets


class Judge:
    def __init__(self, analysis: OwnerAnalysis, findings: list[Finding]):
        self.resolver, self.analysis = analysis.resolver, analysis
        self.chains: CaptureChainAnalysis = analysis.chains
        self.by_class: dict[tuple[str, str], list[Finding]] = {}
        for f in findings:
            self.by_class.setdefault((os.path.abspath(f.path), f.class_name), []).append(f)
            for label in f.subclasses:  # a gap is reported once, at the base that has it
                name, _, where = label.partition(" (")
                path = os.path.join(os.path.dirname(os.path.abspath(f.path)), where[:-1]) if where else f.path
                self.by_class.setdefault((os.path.abspath(path), name), []).append(f)
        self._rows: dict[tuple[ClassEntity, str], Row] = {}

    def row(self, entry: ClassEntity, pack: Interface) -> Row:
        """The class's own row: what it lacks and what fills it, the model it holds judged only
        as far as the class's own gap needs (memoised: a held model is judged once for every
        class that may hold it)."""
        key = (entry, pack.name)
        if key not in self._rows:
            status, detail, codes = self.verdict(entry, pack)
            self._rows[key] = Row(os.path.abspath(entry.path), entry.qualname, pack.name, status, detail, codes)
        return self._rows[key]

    def findings_of(self, row: Row) -> list[Finding]:
        """The findings of `row`'s class that its verdict rests on."""
        return [f for f in self.by_class.get((row.path, row.entry), []) if f.code in row.codes]

    def matrix_row(self, entry: ClassEntity, pack: Interface) -> Row:
        """The matrix's row: the class's own, and where the model it holds is chosen by the
        checkpoint among several, a verdict per model it may hold. Their verdicts decide the
        status where they differ from the class's own: all supported (after the fix) keeps a
        supported or fixable status, all not supported or all unknown say so, a mix is DEPENDS."""
        row = self.row(entry, pack)
        if row.status in (DRAFT, NOT_APPLICABLE) or row.status == UNKNOWN and row.codes:
            return row
        choice = self.held_choice(entry, pack)
        if choice is None:
            return row
        attr, classes = choice
        options = registry_candidates(self.resolver, entry, classes)
        if options is None:
            options = [(c, ()) for c in classes]
        if len(options) < 2:
            return row  # one model a checkpoint can give, or none: the class's own row says it
        candidates = tuple(self.candidate(entry, held, pack, types) for held, types in options)
        verdicts = {c.verdict for c in candidates}
        status = row.status
        if verdicts <= {WORKS, AFTER_FIX}:
            if status not in (SUPPORTED, FIXABLE, IMPLEMENTABLE):
                status = SUPPORTED if verdicts == {WORKS} else FIXABLE
        elif verdicts == {FAILS}:
            status = NOT_SUPPORTED
        elif verdicts == {UNDECIDED}:
            status = UNKNOWN
        else:
            status = DEPENDS
        return Row(row.path, row.entry, row.pack, status, row.detail, row.codes, attr, candidates)

    def held_choice(self, entry: ClassEntity, pack: Interface) -> tuple[str, list[ClassEntity]] | None:
        """Where entry holds one of several models, chosen when it is built (by its config: an
        if/elif chain, a registry lookup, a version table): the attribute, and the classes it
        may hold there. The attribute is the one its findings delegate to, else
        `language_model`, else the one its `__getattr__` forwards the pack's members to (a
        dispatcher: MiniCPMV builds one model per checkpoint version and forwards to it)."""
        resolver = self.resolver
        members = [m.name for m in target_members(pack)]
        attrs = [f.wrapper_attribute for f in self.findings_of(self.row(entry, pack))]
        attrs += [DEFAULT_HELD_ATTR, self._forwarded_attr(entry, members)]
        for attr in dict.fromkeys(a for a in attrs if a):
            holder = next((c for c in resolver.mro(entry) if resolver.assigns(c, attr)), None)
            if holder is None:
                continue
            classes, _ = wrapped_candidates(resolver, holder, attr)
            if len(classes) >= 2:
                return attr, classes
        return None

    def candidate(self, entry: ClassEntity, held: ClassEntity, pack: Interface,
                  model_types: tuple[str, ...] = ()) -> Candidate:
        """The verdict for a checkpoint for which entry holds `held`."""
        found = self.with_held(entry, held, pack)
        why = f"{held.qualname}: {found.held_reason}" if found.held_decides else \
            f"{held.qualname} ({found.held.status}); {entry.qualname}: {found.own_reason}"
        return Candidate(os.path.abspath(held.path), held.qualname, self.resolver.info(held).line, found.held.status,
                         found.status, why, model_types)

    def with_held(self, entry: ClassEntity, held: ClassEntity, pack: Interface) -> HeldVerdict:
        """The verdict where entry holds `held`: the worse of the two rows after the fix. A class
        whose own row judged the models it may hold (not supported or unknown, with no finding
        of its own) leaves the verdict to the one held."""
        row, held_row = self.row(entry, pack), self.row(held, pack)
        own, own_reason = self.after_fix(entry, pack)
        held_status, held_reason = self.after_fix(held, pack)
        if not row.codes and row.status in (UNKNOWN, NOT_SUPPORTED):
            own = WORKS
        status = max(own, held_status, key=VERDICTS.index)
        return HeldVerdict(status, held_row, held_reason, own_reason, status == held_status != WORKS)

    def after_fix(self, entry: ClassEntity, pack: Interface) -> tuple[str, str]:
        """The class's own row as a deployment's answer: supported after the fix only where
        every finding it rests on is one `fix --write` writes, and the members those write are
        all it lacks."""
        row = self.row(entry, pack)
        if row.status == SUPPORTED:
            refused = self._refused(entry, pack)
            if refused is not None:
                return FAILS, f"{row.detail}, but {refused} raises on every path: the engine's call fails"
            return WORKS, row.detail
        if row.status in (FIXABLE, IMPLEMENTABLE):
            found = self.findings_of(row)
            if found and all(f.fixable for f in found) and (row.status == FIXABLE or OWNER_CODE in row.codes):
                written = {f.method for f in found}
                left = [m.name for m in target_members(pack)
                        if m.name not in written and not has_member(self.resolver, entry, m.name)]
                if left:
                    return FAILS, f"{row.status}, but no fix writes {', '.join(left)}, which it lacks too: " \
                                  f"{row.detail}"
                return AFTER_FIX, f"{row.status}: {row.detail}"
            return FAILS, f"{row.status}, no automatic fix: {row.detail}"
        if row.status == UNKNOWN:
            return UNDECIDED, row.detail
        if row.status in (DRAFT, NOT_APPLICABLE):
            return FAILS, f"{row.status}: {row.detail}"
        return FAILS, row.detail

    def verdict(self, entry: ClassEntity, pack: Interface) -> tuple[str, str, tuple[str, ...]]:
        """The status, why, and the codes of the findings it rests on."""
        if is_draft(self.resolver, entry):
            return DRAFT, "SGLang loads it only as the draft model; target-side support does not apply", ()
        names = load_codes()
        members = [m.name for m in target_members(pack)]
        # a finding about a member this pack needs is this pack's too, whichever selected pack
        # the check named it after (eagle and eagle3 both have get_embed_and_head)
        found = [f for f in self.by_class.get((entry.path, entry.qualname), [])
                 if f.method in members or f.method is None and f.interface in (None, pack.name)]
        embeddings = self.analysis.serves_embeddings(entry)
        if embeddings is not None:
            return NOT_APPLICABLE, f"it cannot generate: {embeddings}", ()
        # a capture member alone makes no target: a registered decoder (layers, no head) whose
        # output no logits processor reads serves embeddings, whatever it inherits
        if not found and not self.chains.can_generate(entry) and (
                self.chains.is_decoder(entry) or not any(has_member(self.resolver, entry, h) for h in CAPTURES)):
            return NOT_APPLICABLE, "it cannot generate (no logits processor of its own or in a model it holds: " \
                                   "an embedding, reward or classification model)", ()
        for f in found:
            if names[f.code].name in ("unreadable-file", "unresolved-wrapped-class"):
                return UNKNOWN, f.sentence, (f.code,)
        owner = [f for f in found if f.code in (OWNER_CODE, OWNER_NO_FIX_CODE)]
        if owner:
            fixed = _methods([f for f in owner if f.code == OWNER_CODE])
            by_hand = [f for f in owner if f.code != OWNER_CODE]
            never = self._never_works(entry, by_hand)
            if never:  # no member, written by hand or by the fix, makes EAGLE-3 work on it
                return NOT_SUPPORTED, f"lacks {CAPTURE_HOOK}, and no member can make EAGLE-3 work: {never}", \
                    _codes(owner)
            parts = [f"eaglelint fix writes {', '.join(fixed)}"] if fixed else []
            if by_hand:  # the reason the check gives, then the subclasses that inherit the gap
                also = "".join(f"; {line}" for line in inherited_by(by_hand[0].subclasses))
                parts.append(f"write by hand {', '.join(_methods(by_hand))} ({by_hand[0].fix_refusal}){also}")
            return IMPLEMENTABLE, "; ".join(parts), _codes(owner)
        gaps = [f for f in found if f.code in DELEGATION_CODES]
        aux = [f for f in found if names[f.code].name.startswith("aux-")]
        if gaps and aux:  # the delegations leave its own forward's path as it is: what `check` says after the fix
            return NOT_SUPPORTED, f"eaglelint fix delegates {', '.join(_methods(gaps))} to " \
                                  f"self.{gaps[0].wrapper_attribute}, but {aux[0].code}: {aux[0].sentence}", \
                _codes(gaps + aux)
        if gaps:
            delegate = f"delegate {', '.join(_methods(gaps))} to self.{gaps[0].wrapper_attribute}"
            uncovered = [m for m in members if m not in _methods(gaps) and not has_member(self.resolver, entry, m)]
            rest = self._decided(entry, (*self._without_finding(entry, uncovered), ())) if uncovered else None
            if rest is not None and rest[0] in (NOT_SUPPORTED, UNKNOWN):
                # what the delegations leave it lacking decides (the language model held lacks it too)
                return rest[0], f"eaglelint fix can {delegate}, but it {rest[1]}", _codes(gaps)
            return FIXABLE, delegate, _codes(gaps)
        missing = [m for m in members if not has_member(self.resolver, entry, m)]
        if aux and not missing:
            return NOT_SUPPORTED, f"has the members, but {aux[0].code}: {aux[0].sentence}", _codes(aux)
        if not missing:
            return self._decided(entry, self._chain(entry, members, [f for f in found if f.code in CHAIN_CODES]))
        return self._decided(entry, (*self._without_finding(entry, missing), ()))

    def _decided(self, entry: ClassEntity,
                 verdict: tuple[str, str, tuple[str, ...]]) -> tuple[str, str, tuple[str, ...]]:
        """An undecided verdict that the served forward decides after all: where it hands its
        logits processor no aux hidden states on any path, no capture reaches the draft,
        whatever the decoder (or the members) would do."""
        if verdict[0] != UNKNOWN:
            return verdict
        place = self.chains.logits_without_aux(entry)
        if place is None:
            return verdict
        return NOT_SUPPORTED, f"{verdict[1].split(';')[0]}; its forward {place} passes the logits processor no " \
                              f"aux hidden states (nothing, or None, in their place), so the draft never gets them", ()

    def _chain(self, entry: ClassEntity, members: list[str],
               broken: list[Finding]) -> tuple[str, str, tuple[str, ...]]:
        """Has the members: supported only when the capture chain of each capture member holds.
        The findings EGL050-EGL053 name a broken link: the row says the first. A link the chain
        finds broken where the check made no finding is said with the code the check gives it
        (so a test sees the two disagree); an undecided one is unknown."""
        if broken:
            return NOT_SUPPORTED, f"has the members, but {broken[0].code}: {broken[0].sentence}", _codes(broken)
        for hook in members:
            chain = self.chains.chain(entry, hook) if hook in CAPTURES else None
            if chain is None or chain.holds:
                continue
            if chain.broken:
                return NOT_SUPPORTED, f"has the members, but the capture chain breaks at link " \
                                      f"{chain.broken[0].link.letter}: {chain.broken[0].message}", \
                    tuple(dict.fromkeys(CODE_BY_LINK[b.link] for b in chain.broken))
            return UNKNOWN, f"has the members, but whether {hook} captures cannot be told: " \
                            f"{'; '.join(chain.unknown)}", ()
        return SUPPORTED, f"has {', '.join(members)}" if members else "the pack asks nothing of a target", ()

    def _without_finding(self, entry: ClassEntity, missing: list[str]) -> tuple[str, str]:
        """A gap no rule reports: say why it cannot be filled, or what eaglelint cannot tell."""
        resolver, lacks = self.resolver, ", ".join(missing)
        owner = self.analysis.owner(entry)
        if owner is not None and owner.parameter and owner.cls != entry and \
                chooses_decoder(resolver, entry, owner.cls, owner.parameter):
            return UNKNOWN, f"lacks {lacks}; its own __init__ may pass {owner.cls.qualname} another decoder than " \
                            f"the default of {owner.parameter} (a run-time choice eaglelint does not follow yet)"
        if owner is not None:
            if owner.collects is False:
                bad = next(d for d in owner.decoders if d.collects is False)
                return NOT_SUPPORTED, f"lacks {lacks}; its decoder {bad.cls.qualname}: {bad.why}"
            if owner.collects is None:
                why = "; ".join([*owner.unresolved, *(d.why for d in owner.decoders if d.collects is None)])
                return UNKNOWN, f"lacks {lacks}; cannot tell whether self.{owner.attr} collects aux hidden " \
                                f"states: {why or 'no class resolved'}"
            why = "it has no self.lm_head" if not owner.head else "its forward makes no logits call of its own" \
                if not self.analysis.computes_logits(entry) else "no rule writes this pack's members on owners"
            return IMPLEMENTABLE, f"lacks {lacks}; its decoder {owner.decoders[0].cls.qualname} collects aux " \
                                  f"hidden states; write them by hand ({why})"
        for attr in DEFAULT_WRAPPER_ATTRS:
            if any(attr in resolver.info(c).self_assigns for c in resolver.mro(entry)):
                if all(presence(resolver, entry, m, attr) is True for m in missing):
                    return SUPPORTED, f"its __getattr__ forwards {lacks} to self.{attr}"
                return self._wrapper(entry, attr, missing)
        return self._dispatcher(entry, missing) or self._held_model(entry, missing) or \
            self._other_decoder(entry, lacks)

    def _wrapper(self, entry: ClassEntity, attr: str, missing: list[str]) -> tuple[str, str]:
        """entry holds a language model as self.<attr> and no rule asks it for a delegation:
        the held model lacks the members too (said only once every class it may be lacks them)."""
        resolver, lacks = self.resolver, ", ".join(missing)
        holder = next(c for c in resolver.mro(entry) if attr in resolver.info(c).self_assigns)
        classes, reasons = wrapped_candidates(resolver, holder, attr)
        if not classes:
            return UNKNOWN, f"lacks {lacks}; its {attr} cannot be resolved: {'; '.join(reasons) or 'no value'}"
        held = ", ".join(c.qualname for c in classes)
        having = [m for m in missing if any(has_member(resolver, c, m) for c in classes)]
        if having:  # the members rule would ask for a delegation here: a case it does not model
            return UNKNOWN, f"lacks {lacks}; its {attr} ({held}) has {', '.join(having)}, but eaglelint " \
                            f"proposes no delegation to it"
        fixed = self._owner_fixes(classes, missing)
        if fixed:  # the fix writes the held owner's members, then (its next pass) the delegation to them
            return IMPLEMENTABLE, f"lacks {lacks}, and so does its {attr} ({held}); eaglelint fix writes " \
                                  f"{fixed}, then delegates {lacks} to self.{attr}"
        return NOT_SUPPORTED, f"lacks {lacks}, and so does its {attr} ({held}){self._held_gap(classes)}"

    def _owner_fixes(self, classes: list[ClassEntity], missing: list[str]) -> str:
        """Where every class held is an owner whose own EGL040 findings write each member the
        wrapper lacks (the fix's first pass), what they write, with file:line; "" otherwise."""
        said = []
        for cls in classes:
            found = {f.method: f for f in self.by_class.get((os.path.abspath(cls.path), cls.qualname), [])
                     if f.code == OWNER_CODE}
            if not all(m in found or has_member(self.resolver, cls, m) for m in missing):
                return ""
            said += [f"{cls.qualname}.{m} (EGL040, {os.path.basename(found[m].path)}:{found[m].line})"
                     for m in missing if m in found]
        return ", ".join(said)

    def _held_model(self, entry: ClassEntity, missing: list[str]) -> tuple[str, str] | None:
        """A whole language model held under another attribute (one with a logits processor of
        its own: JetVLM's self.llm, Qwen3-Omni's self.thinker), found by what the held class is.
        The engine's call on entry reaches it only through a delegation: entry is a wrapper of
        it, not the owner of the decoder inside it. An attribute its __getattr__ forwards the
        members to is left to the rest (a dispatcher, _dispatcher)."""
        resolver = self.resolver
        seen: set[str] = set(DEFAULT_WRAPPER_ATTRS)
        for c in resolver.mro(entry):
            for attr in resolver.info(c).self_assigns:
                if attr in seen or attr in (HEAD, LOGITS, LAYER_CONTAINER):
                    continue
                seen.add(attr)
                if any(self.chains.generates(h) for h in held_classes(resolver, entry, attr)[0]) and \
                        not all(presence(resolver, entry, m, attr) is True for m in missing):
                    return self._wrapper(entry, attr, missing)
        return None

    def _held_gap(self, classes: list[ClassEntity]) -> str:
        """What stands in the held model's way: where `check` reports its own gap (an owner's
        EGL040/EGL041, a delegation), along its MRO, to fill first, or why no member can fill
        it (an owner whose layers keep state outside the verify pass); else the decoder it owns
        that collects nothing."""
        for cls in classes:
            for c in self.resolver.mro(cls):
                gap = [f for f in self.by_class.get((os.path.abspath(c.path), c.qualname), [])
                       if f.code in (OWNER_CODE, OWNER_NO_FIX_CODE, *DELEGATION_CODES)]
                if gap:
                    f = gap[0]
                    never = self._never_works(c, gap)
                    if never:  # no gap of its to fill: no member makes EAGLE-3 work on it
                        return f"; no member can make EAGLE-3 work on {c.qualname}: {never}"
                    codes = "/".join(_codes(gap))
                    return f"; fill {f.class_name}'s gap first ({codes}, {os.path.basename(f.path)}:{f.line})"
        for cls in classes:
            owner = self.analysis.owner(cls)
            if owner is not None and owner.collects is False:
                bad = next(d for d in owner.decoders if d.collects is False)
                return f"; its decoder {bad.cls.qualname}: {bad.why}"
        return ""

    def _never_works(self, cls: ClassEntity, found: list[Finding]) -> str | None:
        """Why no capture member, the fix's or a person's, makes EAGLE-3 work on the owner cls,
        where `check` left its set_eagle3_layers_to_capture without a fix (an EGL041 among
        `found`); None otherwise."""
        if not any(f.code == OWNER_NO_FIX_CODE and f.method == CAPTURE_HOOK for f in found):
            return None
        held = self.analysis.owner(cls)
        return unverifiable(self.analysis, held) if held is not None else None

    def _dispatcher(self, entry: ClassEntity, missing: list[str]) -> tuple[str, str] | None:
        """A class whose `__getattr__` forwards the missing members to a model it builds
        (MiniCPMV builds one per checkpoint version): the engine's call reaches that model, so
        when no model it can build has them, the call raises whichever it builds."""
        resolver = self.resolver
        attr = self._forwarded_attr(entry, missing)
        if attr is None:
            return None
        holder = next((c for c in resolver.mro(entry) if attr in resolver.info(c).self_assigns), None)
        if holder is None:
            return None
        classes, reasons = wrapped_candidates(resolver, holder, attr)
        if not classes or reasons:
            return None

        def lacks(cls: ClassEntity, member: str) -> bool:
            return presence(resolver, cls, member, "") is False and resolver.find_member(cls, "__getattr__") is None

        if all(any(lacks(c, m) for m in missing) for c in classes):
            return NOT_SUPPORTED, f"lacks {', '.join(missing)}; its __getattr__ forwards them to self.{attr}, " \
                                  f"and every model it can build there lacks one: " \
                                  f"{', '.join(c.qualname for c in classes)}"
        return None

    def _refused(self, entry: ClassEntity, pack: Interface) -> str | None:
        """Where a capture member of the pack raises on purpose whatever decoder it is bound to
        (a version that writes the member only to refuse): the member the row found present
        fails the engine's call."""
        for member in target_members(pack):
            chain = self.chains.chain(entry, member.name) if member.name in CAPTURES else None
            if chain is not None and chain.refuses is not None:
                return str(chain.refuses)
        return None

    def _forwarded_attr(self, entry: ClassEntity, members: list[str]) -> str | None:
        """The one attribute entry's `__getattr__` forwards all of `members` to, if so."""
        getattr_ = self.resolver.find_member(entry, "__getattr__")
        node = self.resolver.info(getattr_.owner).getattr_forwards if getattr_ is not None else None
        targets = {forwarded(node, m) for m in members} if node is not None else set()
        if len(targets) != 1 or next(iter(targets))[0] != "forward":
            return None
        return next(iter(targets))[1]

    def _other_decoder(self, entry: ClassEntity, lacks: str) -> tuple[str, str]:
        """A decoder held under another attribute (`self.transformer`): found by what it is."""
        found = self.chains.decoder_paths(entry) or self._deep_decoder(entry)
        if not found:
            return UNKNOWN, f"lacks {lacks}; holds no decoder or language model eaglelint recognises"
        path, decoder = found[0]
        capture = self.chains.decoder(decoder)
        held = f"self.{'.'.join(path)} ({decoder.qualname})"
        if capture.collects is False:
            return NOT_SUPPORTED, f"lacks {lacks}; its decoder {held}: {capture.why}"
        if capture.collects is None:
            return UNKNOWN, f"lacks {lacks}; cannot tell whether {held} collects: {capture.why}"
        return IMPLEMENTABLE, f"lacks {lacks}; its decoder {held} collects aux hidden states; write them by hand"

    def _deep_decoder(self, entry: ClassEntity) -> list[tuple[tuple[str, ...], ClassEntity]]:
        """A generating class whose one decoder sits two objects down under any attribute
        (ChatGLM: self.transformer, a ChatGLMM, holds self.encoder, a GLMTransformer): found
        by what the objects are; only a single decoder in all it holds is taken."""
        if not self.chains.generates(entry):
            return []
        found: list[tuple[tuple[str, ...], ClassEntity]] = []
        todo: list[tuple[tuple[str, ...], ClassEntity]] = [((), entry)]
        while todo:
            path, cls = todo.pop(0)
            attrs = dict.fromkeys(a for c in self.resolver.mro(cls) for a in self.resolver.info(c).self_assigns)
            for attr in attrs:
                if attr in (HEAD, LOGITS, LAYER_CONTAINER):
                    continue
                for held in held_classes(self.resolver, cls, attr)[0]:
                    if self.chains.is_decoder(held):
                        found.append((path + (attr,), held))
                    elif len(path) < 1:
                        todo.append((path + (attr,), held))
        return found if len(found) == 1 else []
