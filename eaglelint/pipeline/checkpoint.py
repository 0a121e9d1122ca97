"""One checkpoint's verdict: will EAGLE-3 work for the model a `config.json` describes?

Why a verdict per checkpoint beside the matrix: the matrix judges a class, and a class such as
InternVL or Llava serves a different language model per checkpoint. The served class and the
model it holds are resolved from the config as SGLang resolves them (analysis/sglang/checkpoint.py);
each is then judged by the matrix's own row logic (support.py `Judge`), so the verdict rests on
the same findings `check` reports and `fix` acts on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.python.discover import discover
from ..analysis.python.presence import has_member
from ..analysis.python.project import Project
from ..analysis.python.resolve import ClassEntity
from ..analysis.sglang.checkpoint import ARCHITECTURES, Pick, branch_pick, registry_pick, served_class, table_pick
from ..analysis.sglang.owners import checked_analysis
from ..analysis.sglang.served import REGISTRY_FILE, served
from ..checks.run import CheckOptions, check_files
from ..findings import Finding
from ..packs import Interface
from .support import (
    AFTER_FIX,
    DEPENDS,
    FAILS,
    UNDECIDED,
    WORKS,
    Judge,
    Row,
    dependence,
    target_members,
)

__all__ = ["AFTER_FIX", "EXIT_CODES", "FAILS", "UNDECIDED", "WORKS", "Verdict", "checkpoint_verdicts"]

# exit codes of `support --config`: 2 stays the usage and configuration error of every command
EXIT_CODES = {WORKS: 0, FAILS: 1, AFTER_FIX: 3, UNDECIDED: 4}
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
        judge = Judge(checked_analysis(project), findings)  # the check's own analysis: it read these classes
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
    row, shown = judge.row(cls, pack), judge.matrix_row(cls, pack)
    pick = _pick(judge, cls, pack, config)
    base = Verdict(pack.name, *judge.after_fix(cls, pack), name, shown, pick, findings=_findings(judge, row))
    if pick is None:
        if shown.status == DEPENDS:  # chosen in a way the config is not read for (MiniCPMV's version table)
            return _with(base, UNDECIDED, f"cannot tell which self.{shown.attribute} {cls.qualname} builds for this "
                                          f"config: {dependence(shown, verbose=True)}")
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
    found = judge.with_held(cls, pick.cls, pack)
    held = found.held
    picked = f"for {said} ({where}{': ' + pick.why if pick.why else ''}) it holds {pick.cls.qualname} as " \
             f"self.{pick.attr}"
    reason = f"{picked}, and {pick.cls.qualname} is {held.status}: {found.held_reason}" if found.held_decides \
        else f"{picked} ({held.status}); {cls.qualname}: {found.own_reason}"
    return Verdict(pack.name, found.status, reason, name, shown, pick, held, base.findings + _findings(judge, held))


def _with(verdict: Verdict, status: str, reason: str) -> Verdict:
    return Verdict(verdict.pack, status, reason, verdict.architecture, verdict.served, verdict.pick,
                   findings=verdict.findings)


def _pick(judge: Judge, cls: ClassEntity, pack: Interface, config: dict) -> Pick | None:
    """What the served class holds for this config, where its __init__ chooses by the config
    among the models the matrix's row judges (Judge.held_choice)."""
    choice = judge.held_choice(cls, pack)
    if choice is None:
        return None  # one model whatever the checkpoint: the row says it all
    attr, candidates = choice
    resolver = judge.resolver
    return branch_pick(resolver, cls, attr, config) or table_pick(resolver, cls, attr, config) or \
        registry_pick(resolver, cls, attr, candidates, config)


def _findings(judge: Judge, row: Row) -> tuple[Finding, ...]:
    return tuple(judge.findings_of(row))


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
