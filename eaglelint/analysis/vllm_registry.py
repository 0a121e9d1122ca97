"""vLLM's model registry: which class a loader call builds, and which classes vLLM serves.

Why: a vLLM wrapper rarely names its language model's class. It asks a loader
(`init_vllm_registered_model(vllm_config, hf_config=..., architectures=["Qwen2ForCausalLM"])`,
`initialize_model(vllm_config, model_class=X)`, with `vllm_config.with_hf_config(cfg, [...])`
around it) and vLLM looks the architecture name up in the tables of
`vllm/model_executor/models/registry.py` (architecture -> (module, class); a module
written `vllm.models.x` is absolute, any other lives in vllm/model_executor/models).
Those tables are plain literals, read here with `ast`. Where no literal names the
architecture, the checkpoint's config does at load time: the answer is an Unknown that
says so, never a guess.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .entities import ClassEntity, Entity, InstanceEntity, ModuleEntity, Unknown
from .project import Project
from .refs import Ref
from .sources import SourceError

if TYPE_CHECKING:  # the resolver hands references here; only its type is needed
    from .resolve import Resolver

REGISTRY_MODULE = "vllm.model_executor.models.registry"
MODELS_PACKAGE = "vllm.model_executor.models."
ALL_MODELS = "_VLLM_MODELS"  # the table vLLM resolves architectures with: every other merged
# Tables of models the engine never runs EAGLE-3 for as the target: drafts, and the
# pooling models (speculative decoding is for the generate runner only).
NOT_TARGETS = ("_SPECULATIVE_DECODING_MODELS", "_EMBEDDING_MODELS", "_LATE_INTERACTION_MODELS", "_REWARD_MODELS",
               "_TOKEN_CLASSIFICATION_MODELS", "_SEQUENCE_CLASSIFICATION_MODELS")


@dataclass(frozen=True)
class Registry:
    path: Path
    models: dict[str, tuple[str, str]]  # architecture -> (absolute module, class name)
    not_targets: frozenset[str] = frozenset()  # architectures only of drafts or pooling models


_registries: weakref.WeakKeyDictionary[Project, dict[Path, Registry | None]] = weakref.WeakKeyDictionary()


def registry_for(project: Project, path: str) -> Registry | None:
    """The registry of the vLLM tree `path` lives in, or None (not in a vLLM tree)."""
    location = project.resolve_module(REGISTRY_MODULE, Path(path))
    if location is None or location.suffix != ".py":
        return None
    known = _registries.setdefault(project, {})
    if location not in known:
        known[location] = _read(project, location)
    return known[location]


def _read(project: Project, path: Path) -> Registry | None:
    try:
        tree = project.tree(path)
    except SourceError:
        return None
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    tables[target.id] = _table(node.value, tables)
    models = tables.get(ALL_MODELS) or {k: v for t in tables.values() for k, v in t.items()}
    absolute = {arch: (mod if mod.startswith("vllm.") else MODELS_PACKAGE + mod, cls)
                for arch, (mod, cls) in models.items()}
    others = {arch for name, table in tables.items() if name not in NOT_TARGETS and name != ALL_MODELS
              for arch in table}
    not_targets = {arch for name in NOT_TARGETS for arch in tables.get(name, {})} - others
    return Registry(path, absolute, frozenset(not_targets)) if models else None


def _table(node: ast.Dict, tables: dict[str, dict[str, tuple[str, str]]]) -> dict[str, tuple[str, str]]:
    """`{"Arch": ("module", "Class"), **_OTHER}` as a dict; later entries win, as in Python."""
    out: dict[str, tuple[str, str]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:  # `**_OTHER` (a comprehension spread only repeats entries of a table)
            if isinstance(value, ast.Name):
                out.update(tables.get(value.id, {}))
            continue
        pair = _strings(value)
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and pair is not None and len(pair) == 2:
            out[key.value] = (pair[0], pair[1])
    return out


def _strings(node: ast.AST) -> list[str] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def served(resolver: Resolver, registry: Registry) -> set[ClassEntity]:
    """Every class the registry can hand to the engine as the served model that EAGLE-3
    drafts for (all platforms' bindings of a name); drafts and pooling models are left out."""
    out: set[ClassEntity] = set()
    for arch in registry.models.keys() - registry.not_targets:
        for cls in (e.cls for e in architecture_classes(resolver, registry, arch) if isinstance(e, InstanceEntity)):
            out |= {cls, *_made_by_new(resolver, cls)}
    return out


def _made_by_new(resolver: Resolver, cls: ClassEntity) -> list[ClassEntity]:
    """What a registered class's own `__new__` returns instead of itself (MiniCPMV builds
    the class of the checkpoint's version): that object is the one the engine serves."""
    new = resolver.info(cls).methods.get("__new__")
    if new is None:
        return []
    return [e.cls for r in new.returns for e in resolver.evaluate(r, cls.path, cls) if isinstance(e, InstanceEntity)]


def architecture_classes(resolver: Resolver, registry: Registry, arch: str, depth: int = 0) -> list[Entity]:
    """Instances of the class(es) vLLM builds for `arch`, or why not."""
    if arch not in registry.models:
        return [Unknown(f"architecture {arch!r} is not in vLLM's registry ({registry.path.name})")]
    module, name = registry.models[arch]
    location = resolver.project.resolve_module(module, registry.path)
    if location is None:
        return [Unknown(f"registry: {arch} is {module}.{name}, outside the scanned tree")]
    return [InstanceEntity(e) if isinstance(e, ClassEntity) else e
            for e in resolver.member(ModuleEntity(location), name, depth)]


def loaded(resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None, depth: int) -> list[Entity] | None:
    """What a vLLM loader call Ref builds, or None where `path` is in no vLLM tree (the
    call is then evaluated as any other)."""
    registry = registry_for(resolver.project, path)
    if registry is None:
        return None
    arguments = {a.name: a.args for a in ref.args[1:]}
    if ref.name == "with_hf_config":
        return [LoaderConfig(arguments)]  # type: ignore[list-item]
    if "model_class" in arguments:
        out: list[Entity] = []
        for r in arguments["model_class"]:
            out += [InstanceEntity(e) if isinstance(e, ClassEntity) else e
                    for e in resolver.evaluate(r, path, owner, depth)]
        return out
    config: dict[str, tuple[Ref, ...]] = {}
    if "hf_config" in arguments or "architectures" in arguments:
        config = {k: v for k, v in arguments.items() if k in ("hf_config", "architectures")}
    else:  # the config of `vllm_config=vllm_config.with_hf_config(cfg, [...])`, if so written
        for r in arguments.get("vllm_config", ()):
            for e in resolver.evaluate(r, path, owner, depth):
                if isinstance(e, LoaderConfig):
                    config = e.arguments
    return _by_architectures(resolver, registry, ref.name, config, depth)


@dataclass(frozen=True)
class LoaderConfig:
    """`vllm_config.with_hf_config(...)`: a config whose architectures a loader then reads."""

    arguments: dict

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.arguments.items())))


def _by_architectures(resolver: Resolver, registry: Registry, loader: str, config: dict, depth: int) -> list[Entity]:
    out: list[Entity] = []
    for value in config.get("architectures", ()):
        if value.kind == "seq" and value.args and all(a.kind == "str" for a in value.args):
            out += architecture_classes(resolver, registry, value.args[0].name, depth)
        elif value.kind in ("attr", "call") or value.kind == "const" and value.name == "None":
            source = config.get("hf_config") if value.kind == "const" else (value,)
            out.append(Unknown(_from_checkpoint(loader, source)))
        else:
            out.append(Unknown(f"{loader}(): architectures={text(value)} is not a literal list of names"))
    if "architectures" not in config:
        out.append(Unknown(_from_checkpoint(loader, config.get("hf_config"))))
    return out


def _from_checkpoint(loader: str, source: tuple[Ref, ...] | None) -> str:
    where = f"the `architectures` of {text(source[0])}" if source else "the served checkpoint's `architectures`"
    return f"chosen at load time by the checkpoint's config: {loader}() builds the class {where} names"


def text(ref: Ref) -> str:
    """An expression Ref written back as source, for messages."""
    if ref.kind in ("name", "str"):
        return ref.name
    if ref.kind == "attr" and text(ref.args[0]) == "...":
        return ref.name
    if ref.kind == "self":
        return f"self.{ref.name}"
    if ref.kind == "attr":
        return f"{text(ref.args[0])}.{ref.name}"
    if ref.kind == "call":
        return f"{text(ref.args[0])}()"
    if ref.kind == "import":
        return ref.attr or ref.name
    return "..."
