"""One checkpoint's verdict: will EAGLE-3 work for the model a `config.json` describes?

Why a verdict per checkpoint beside the matrix: the matrix judges a class, and a class such as
InternVL or Llava serves a different language model per checkpoint. The served class and the
model it holds are resolved from the config as SGLang resolves them (analysis/checkpoint.py);
each is then judged by the matrix's own row logic (support.py `Judge`), so the verdict rests on
the same findings `check` reports and `fix` acts on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.checkpoint import ARCHITECTURES, Pick, branch_pick, registry_pick, served_class
from ..analysis.discover import discover
from ..analysis.owners import OwnerAnalysis
from ..analysis.prefilter import DEFAULT_HELD_ATTR
from ..analysis.presence import has_member
from ..analysis.project import Project
from ..analysis.resolve import ClassEntity, Resolver
from ..analysis.served import REGISTRY_FILE, served
from ..analysis.wrappers import wrapped_candidates
from ..checks.owner import CODE as OWNER_CODE
from ..checks.run import CheckOptions, check_files
from ..findings import Finding
from ..packs import Interface
from .support import (
    DRAFT,
    FIXABLE,
    IMPLEMENTABLE,
    NOT_APPLICABLE,
    NOT_SUPPORTED,
    SUPPORTED,
    UNKNOWN,
    Judge,
    Row,
    target_members,
)

WORKS = "supported"
AFTER_FIX = "supported after `eaglelint fix --write`"
FAILS = "not supported"
UNDECIDED = "unknown"
# exit codes of `support --config`: 2 stays the usage and configuration error of every command
EXIT_CODES = {WORKS: 0, FAILS: 1, AFTER_FIX: 3, UNDECIDED: 4}
_ORDER = (WORKS, AFTER_FIX, UNDECIDED, FAILS)  # the worse of two verdicts is the later
# what `_normalize_archs` (models/registry.py) appends when no given architecture is registered
FALLBACK_ARCH = "TransformersForCausalLM"


@dataclass(frozen=True)
class Verdict:
    pack: str
    status: str
    reason: str
    architecture: str | None = None
    served: Row | None = None  # the served class's matrix row
    pick: Pick | None = None  # what its __init__ holds for this config
    held: Row | None = None  # the row of the picked language model
    findings: tuple[Finding, ...] = field(default=())  # the findings the verdict rests on


def checkpoint_verdicts(paths: list[Path], packs: list[Interface], config: dict, arch: str | None = None,
                        project: Project | None = None) -> list[Verdict]:
    """One verdict per SGLang pack for the checkpoint `config` describes (`arch` overrides its
    `architectures[0]`), on the scanned tree `paths`."""
    project = project or Project()
    files = discover(paths).files
    packs = [p for p in packs if p.engine == "sglang"]
    findings = check_files(files, CheckOptions(tuple(packs)), project).findings
    first = Path(paths[0]) if paths else Path(".")
    registry_file = str(first / REGISTRY_FILE if first.is_dir() else first)

    def stage() -> list[Verdict]:
        resolver = Resolver(project)
        judge = Judge(resolver, OwnerAnalysis(resolver), findings)
        return [_verdict(judge, registry_file, pack, config, arch) for pack in packs]

    return project.retrying(stage)


def _architecture(config: dict, arch: str | None) -> str | None:
    if arch is not None:
        return arch
    found = config.get(ARCHITECTURES)
    return found[0] if isinstance(found, list) and found and isinstance(found[0], str) else None


def _verdict(judge: Judge, registry_file: str, pack: Interface, config: dict, arch: str | None) -> Verdict:
    name = _architecture(config, arch)
    if name is None:
        return Verdict(pack.name, UNDECIDED, "the config has no architectures[0] (a list of names): SGLang "
                                             "resolves the served class from it (model_loader/utils.py "
                                             "get_model_architecture)")
    cls = served_class(judge.resolver, registry_file, name)
    if cls is None:
        return _unregistered(judge, registry_file, pack, name)
    row = judge.row(cls, pack)
    pick = _pick(judge, cls, row, config)
    base = Verdict(pack.name, *_from_row(judge, row), name, row, pick, findings=_findings(judge, row))
    if pick is None:
        return base
    where = f"{os.path.basename(pick.path)}:{pick.line}"
    said = f"{pick.key} = {pick.value!r}"
    if pick.missing:
        return _with(base, UNDECIDED, f"the config has no {pick.key}: {cls.qualname} picks its {pick.attr} by it "
                                      f"({where})")
    if pick.refused:
        return _with(base, FAILS, f"{cls.qualname} refuses {said} ({where}){': ' + pick.why if pick.why else ''}")
    if pick.cls is None:
        return _with(base, UNDECIDED, f"cannot tell which {pick.attr} {cls.qualname} builds for {said}: {pick.why}")
    held = judge.row(pick.cls, pack)
    held_status, held_reason = _from_row(judge, held)
    wrapper_status = base.status if row.codes or row.status not in (UNKNOWN, NOT_SUPPORTED) else WORKS
    status = max(wrapper_status, held_status, key=_ORDER.index)
    picked = f"for {said} ({where}) it holds {pick.cls.qualname} as self.{pick.attr}"
    if status == held_status and held_status != WORKS:
        reason = f"{picked}, and {pick.cls.qualname} is {held.status}: {held_reason}"
    else:
        reason = f"{picked} ({held.status}); {cls.qualname}: {base.reason}"
    return Verdict(pack.name, status, reason, name, row, pick, held, base.findings + _findings(judge, held))


def _with(verdict: Verdict, status: str, reason: str) -> Verdict:
    return Verdict(verdict.pack, status, reason, verdict.architecture, verdict.served, verdict.pick,
                   findings=verdict.findings)


def _pick(judge: Judge, cls: ClassEntity, row: Row, config: dict) -> Pick | None:
    """What the served class holds for this config, where its __init__ chooses by the config:
    under the attribute its findings delegate to, else the default one."""
    resolver = judge.resolver
    attrs = [f.wrapper_attribute for f in _findings(judge, row)] + [DEFAULT_HELD_ATTR]
    for attr in dict.fromkeys(a for a in attrs if a):
        if not any(resolver.assigns(c, attr) for c in resolver.mro(cls)):
            continue
        holder = next(c for c in resolver.mro(cls) if resolver.assigns(c, attr))
        candidates, _ = wrapped_candidates(resolver, holder, attr)
        if len(candidates) < 2:
            continue  # one model whatever the checkpoint: the row says it all
        return branch_pick(resolver, cls, attr, config) or registry_pick(resolver, cls, attr, candidates, config)
    return None


def _findings(judge: Judge, row: Row) -> tuple[Finding, ...]:
    return tuple(f for f in judge.by_class.get((row.path, row.entry), []) if f.code in row.codes)


def _from_row(judge: Judge, row: Row) -> tuple[str, str]:
    """A matrix row as a deployment's answer: fixable only where every finding it rests on is
    one `fix --write` writes."""
    if row.status == SUPPORTED:
        return WORKS, row.detail
    if row.status in (FIXABLE, IMPLEMENTABLE):
        found = _findings(judge, row)
        if found and all(f.fixable for f in found) and (row.status == FIXABLE or OWNER_CODE in row.codes):
            return AFTER_FIX, f"{row.status}: {row.detail}"
        return FAILS, f"{row.status}, no automatic fix: {row.detail}"
    if row.status == UNKNOWN:
        return UNDECIDED, row.detail
    if row.status in (DRAFT, NOT_APPLICABLE):
        return FAILS, f"{row.status}: {row.detail}"
    return FAILS, row.detail


def _unregistered(judge: Judge, registry_file: str, pack: Interface, name: str) -> Verdict:
    """An architecture no module registers: SGLang falls back to its Transformers backend
    (model_loader/utils.py resolve_transformers_arch; registry.py _normalize_archs appends
    TransformersForCausalLM) where transformers knows the name, else refuses it."""
    registry = served(judge.resolver, registry_file)
    said = f"architectures[0] = {name!r} is registered by no module of {registry.root.name} (no EntryClass lists it)"
    backends = [c for n, c in registry.by_name.items() if n.startswith("Transformers") and n.endswith("ForCausalLM")]
    if FALLBACK_ARCH not in registry.by_name:
        return Verdict(pack.name, FAILS, f"{said}; SGLang refuses it (registry.py _raise_for_unsupported)", name)
    members = [m.name for m in target_members(pack)]
    lacking = [c for c in backends if any(not has_member(judge.resolver, c, m) for m in members)]
    if lacking and len(lacking) == len(backends):
        return Verdict(pack.name, FAILS, f"{said}; SGLang serves it with its Transformers backend if transformers "
                                         f"knows the name, else refuses it, and the backend classes "
                                         f"({', '.join(c.qualname for c in backends)}) lack "
                                         f"{', '.join(members)}", name)
    return Verdict(pack.name, UNDECIDED, f"{said}; SGLang tries its Transformers backend, which eaglelint does "
                                         f"not judge per checkpoint", name)
