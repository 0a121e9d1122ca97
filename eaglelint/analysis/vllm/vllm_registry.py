"""vLLM's model registry: which class a loader call builds, and which classes vLLM serves.

Why: a vLLM wrapper rarely names its language model's class. It asks a loader
(`init_vllm_registered_model(vllm_config, hf_config=..., architectures=["Qwen2ForCausalLM"])`,
`initialize_model(vllm_config, model_class=X)`, with `vllm_config.with_hf_config(cfg, [...])`
around it) and vLLM looks the architecture name up in the tables of
`vllm/model_executor/models/registry.py` (architecture -> (module, class); a module
written `vllm.models.x` is absolute, any other lives in vllm/model_executor/models).
Those tables are plain literals, read here with `ast`. A loader given only
`hf_config=X` builds the class `X.architectures` names, which vLLM's own code may
have written before the call: the class's `__init__` (`X.architectures = ["..."]` on
every branch of an `if`, as PaliGemma does), or the update `models/config.py`'s
`MODELS_CONFIG_MAP` runs for the served architecture before the model is built
(`text_config.architectures = ["DeepseekV2ForCausalLM"]` for Unlimited-OCR). Those
literals are the candidates. Where no literal names the architecture on some path,
the checkpoint's config does at load time: the answer is an Unknown that says so
(`is_checkpoint_choice`), never a guess, and `text_models` lists every class vLLM may
then build.
"""

from __future__ import annotations

import ast
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..capture.wrapper_attrs import DEFAULT_HELD_ATTR
from ..python.entities import ClassEntity, Entity, InstanceEntity, ModuleEntity, Unknown
from ..python.project import Project
from ..syntax.class_body import class_node
from ..syntax.refs import Ref
from ..syntax.sources import SourceError

if TYPE_CHECKING:  # the resolver and the reader hand references here; only their types are needed
    from ..python.calls import CallReader
    from ..python.resolve import Resolver

REGISTRY_MODULE = "vllm.model_executor.models.registry"
MODELS_PACKAGE = "vllm.model_executor.models."
ALL_MODELS = "_VLLM_MODELS"  # the table vLLM resolves architectures with: every other merged
# Tables of models the engine never runs EAGLE-3 for as the target: drafts, and the
# pooling models (speculative decoding is for the generate runner only).
CONFIG_MODULE = "config.py"  # beside registry.py: MODELS_CONFIG_MAP, the per-architecture config updates
CONFIG_MAP = "MODELS_CONFIG_MAP"
CONFIG_UPDATE = "verify_and_update_model_config"  # run on the ModelConfig before the model is built
TEXT_CONFIG = "text_config"
# What vLLM's own tests read on a registered class (interfaces_base.py / interfaces.py):
COMPUTE_LOGITS = "compute_logits"  # is_text_generation_model: a callable compute_logits
MULTIMODAL = "SupportsMultiModal"  # supports_multimodal: the protocol in its bases
DRAFT_CONFIG = "draft_model_config"  # speculative_config's: a class that configures itself from it is a draft
FROM_CHECKPOINT = "chosen at load time by the checkpoint's config"
NOT_TARGETS = ("_SPECULATIVE_DECODING_MODELS", "_EMBEDDING_MODELS", "_LATE_INTERACTION_MODELS", "_REWARD_MODELS",
               "_TOKEN_CLASSIFICATION_MODELS", "_SEQUENCE_CLASSIFICATION_MODELS")
# vLLM's model loaders: the class they build is named by their arguments (through
# registry.py), so a call to one keeps those arguments as `kw` Refs after the callee, and
# the call Ref is named after the loader (`Loaders`). Name -> its positional parameters.
LOADERS = {
    "init_vllm_registered_model": ("vllm_config",),
    "initialize_model": ("vllm_config",),
    "with_hf_config": ("hf_config", "architectures"),
}
LOADER_ARGUMENTS = ("vllm_config", "hf_config", "architectures", "model_class")


@dataclass(frozen=True)
class Registry:
    path: Path
    models: dict[str, tuple[str, str]]  # architecture -> (absolute module, class name)
    not_targets: frozenset[str] = frozenset()  # architectures only of drafts or pooling models
    # served architecture -> (the literal its config update writes to hf_config.text_config.architectures,
    # config.py line), where that update writes one unconditionally
    text_architectures: dict[str, tuple[str, int]] = field(default_factory=dict)


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
    if not models:
        return None
    return Registry(path, absolute, frozenset(not_targets), _config_updates(project, path.with_name(CONFIG_MODULE)))


def _config_updates(project: Project, path: Path) -> dict[str, tuple[str, int]]:
    """Architectures whose MODELS_CONFIG_MAP entry's `verify_and_update_model_config` sets
    `<hf_config>.text_config.architectures = ["Arch", ...]` in its own body (no branch):
    vLLM runs it on the ModelConfig of that served architecture before building the model."""
    try:
        tree = project.tree(path)
    except SourceError:
        return {}
    table = next((n.value for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                  and isinstance(n.value, ast.Dict) and CONFIG_MAP in
                  [t.id for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)]),
                 None)
    if table is None:
        return {}
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    out: dict[str, tuple[str, int]] = {}
    for key, value in zip(table.keys, table.values, strict=True):
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Name) \
                and value.id in classes:
            written = _text_architectures(classes[value.id])
            if written is not None:
                out[key.value] = written
    return out


def _text_architectures(cls: ast.ClassDef) -> tuple[str, int] | None:
    update = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == CONFIG_UPDATE), None)
    if update is None:
        return None
    aliases: set[str] = set()  # locals bound to `....text_config`
    for stmt in update.body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name) and isinstance(stmt.value, ast.Attribute) and stmt.value.attr == TEXT_CONFIG:
            aliases.add(target.id)
        elif isinstance(target, ast.Attribute) and target.attr == "architectures":
            holder = target.value
            names = _strings(stmt.value)
            if names and (isinstance(holder, ast.Name) and holder.id in aliases
                          or isinstance(holder, ast.Attribute) and holder.attr == TEXT_CONFIG):
                return names[0], stmt.lineno
    return None


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
    return _by_architectures(resolver, registry, ref.name, config, depth, (path, owner))


class Loaders:
    """vLLM's model loaders, the engine's call hook (calls.py): a call of one is read as a call
    Ref named after it that keeps the arguments choosing the class (`loader_arguments`), and
    evaluated as the registry builds it (`loaded`)."""

    names = tuple(LOADERS)

    def read(self, call: ast.Call, name: str, reader: CallReader) -> list[Ref] | None:
        return [Ref("call", name, args=(c, *loader_arguments(call, name, reader))) for c in reader.refs(call.func)]

    def evaluate(self, resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None,
                 depth: int) -> list[Entity] | None:
        return loaded(resolver, ref, path, owner, depth) if ref.kind == "call" and ref.name in LOADERS else None


LOADER_CALLS = Loaders()


def loader_arguments(call: ast.Call, loader: str, reader: CallReader) -> list[Ref]:
    """`kw` Refs for the arguments of a loader call that choose the class it builds, string
    constants kept whole (an architecture's name)."""
    named = [*zip(LOADERS[loader], call.args, strict=False),
             *((k.arg or "", k.value) for k in call.keywords if k.arg in LOADER_ARGUMENTS)]
    return [Ref("kw", name, args=tuple(reader.refs(value, literal_strings=True))) for name, value in named]


@dataclass(frozen=True)
class LoaderConfig:
    """`vllm_config.with_hf_config(...)`: a config whose architectures a loader then reads."""

    arguments: dict

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.arguments.items())))


def _by_architectures(resolver: Resolver, registry: Registry, loader: str, config: dict, depth: int,
                      site: tuple[str, ClassEntity | None]) -> list[Entity]:
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
        names, every_path = _written(resolver, registry, loader, config.get("hf_config"), *site)
        for name in names:
            out += architecture_classes(resolver, registry, name, depth)
        if not every_path:
            out.append(Unknown(_from_checkpoint(loader, config.get("hf_config"))))
    return out


def _written(resolver: Resolver, registry: Registry, loader: str, source: tuple[Ref, ...] | None, path: str,
             owner: ClassEntity | None) -> tuple[list[str], bool]:
    """The architectures vLLM's code writes to the loader's `hf_config` before the call, and
    whether every path writes one (else the checkpoint's value stands on the others)."""
    if not source:
        return [], False
    names, every_path = _written_in_class(resolver, loader, path, owner)
    if every_path:
        return names, True
    hf = source[0]
    update = _config_update(resolver, registry, owner) if hf.kind in ("attr", "self") and hf.name == TEXT_CONFIG \
        else None
    return (names + [update], True) if update is not None else (names, False)


def _config_update(resolver: Resolver, registry: Registry, owner: ClassEntity | None) -> str | None:
    """The architecture every registry entry of `owner` has its config update write, or None."""
    if owner is None:
        return None
    archs = [arch for arch, (module, name) in registry.models.items() if name == owner.qualname
             and _same(resolver.project.resolve_module(module, registry.path), owner.path)]
    written = {registry.text_architectures[a][0] for a in archs if a in registry.text_architectures}
    if not archs or len(written) != 1 or not all(a in registry.text_architectures for a in archs):
        return None
    return written.pop()


def _same(location: Path | None, path: str) -> bool:
    return location is not None and os.path.abspath(location) == os.path.abspath(path)


def _written_in_class(resolver: Resolver, loader: str, path: str, owner: ClassEntity | None) -> tuple[list[str], bool]:
    """`X.architectures = ["Arch"]` before the only `loader(..., hf_config=X)` call (no
    `architectures=`) of the classes in owner's MRO defined in `path`: the literals, and
    whether they cover every path to the call (an `if` writing on both branches does)."""
    tree = _tree(resolver.project, path)
    if tree is None:
        return [], False
    qualnames = [c.qualname for c in resolver.mro(owner) if c.path == path] if owner is not None else \
        [n.name for n in tree.body if isinstance(n, ast.ClassDef)]
    sites = []
    for qualname in qualnames:
        node = class_node(tree, qualname)
        for fn in (n for n in node.body if isinstance(n, ast.FunctionDef)) if node is not None else ():
            sites += [(fn, c) for c in ast.walk(fn) if isinstance(c, ast.Call) and _calls(c, loader)]
    if len(sites) != 1:
        return [], False
    fn, call = sites[0]
    hf = next(k.value for k in call.keywords if k.arg == "hf_config")
    before = []
    for stmt in fn.body:
        if any(n is call for n in ast.walk(stmt)):
            break
        before.append(stmt)
    names, every_path = _writes(before, ast.dump(hf))
    return list(dict.fromkeys(names)), every_path


def _calls(call: ast.Call, loader: str) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    keywords = {k.arg for k in call.keywords}
    return name == loader and "hf_config" in keywords and "architectures" not in keywords


def _writes(stmts: list[ast.stmt], target: str) -> tuple[list[str], bool]:
    """Literal architectures these statements write to the expression `target` (an ast
    dump), and whether every path through them writes one; a later write replaces."""
    names: list[str] = []
    every_path = False
    for stmt in stmts:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "architectures"
                                                and ast.dump(t.value) == target for t in stmt.targets):
            written = _strings(stmt.value)
            names, every_path = ([written[0]], True) if written else ([], False)
        elif isinstance(stmt, ast.If):
            body, body_every = _writes(stmt.body, target)
            orelse, orelse_every = _writes(stmt.orelse, target)
            if body_every and orelse_every:
                names, every_path = body + orelse, True
            else:
                names = names + body + orelse
    return names, every_path


def _tree(project: Project, path: str) -> ast.Module | None:
    try:
        return project.tree(path)
    except SourceError:
        return None


def _from_checkpoint(loader: str, source: tuple[Ref, ...] | None) -> str:
    where = f"the `architectures` of {text(source[0])}" if source else "the served checkpoint's `architectures`"
    return f"{FROM_CHECKPOINT}: {loader}() builds the class {where} names"


def is_checkpoint_choice(reason: str) -> bool:
    """Whether an Unknown's reason is a loader's architecture that only the checkpoint's
    config names (the reasons travel as text, through the analysis cache too)."""
    return reason.startswith(FROM_CHECKPOINT)


def text_models(resolver: Resolver, registry: Registry) -> list[ClassEntity]:
    """The classes a loader may build where the checkpoint's config names the architecture.

    vLLM looks the name up in every table of registry.py (`_VLLM_MODELS`; resolve_model_cls
    on the copied ModelConfig, convert_type "none" for a generating model), and an
    architecture it lacks falls back to the Transformers backend's `Transformers*ForCausalLM`,
    registered too. What a text config can name is a text model: a registered class
    that generates (`compute_logits` along its bases, as is_text_generation_model tests),
    is not multimodal (no SupportsMultiModal: it is built from a text config alone), holds
    no language model, and is no draft (not in a draft or pooling-only table, and does not
    configure itself from `speculative_config.draft_model_config`, as the Transformers
    backend's MTP classes do). By name, then path (one name may have a class per platform)."""
    memo: dict[Path, list[ClassEntity]] = resolver.memos.setdefault("vllm.text_models", {})
    if registry.path not in memo:
        found: dict[ClassEntity, None] = {}
        for arch in registry.models.keys() - registry.not_targets:
            for ent in architecture_classes(resolver, registry, arch):
                if isinstance(ent, InstanceEntity) and _is_text_model(resolver, ent.cls):
                    found[ent.cls] = None
        memo[registry.path] = sorted(found, key=lambda c: (c.qualname, c.path))
    return memo[registry.path]


def _is_text_model(resolver: Resolver, cls: ClassEntity) -> bool:
    if resolver.find_member(cls, COMPUTE_LOGITS) is None:
        return False
    for c in resolver.mro(cls):
        assigns = resolver.info(c).self_assigns
        if c.qualname == MULTIMODAL or DEFAULT_HELD_ATTR in assigns:
            return False
        if any(v.kind == "attr" and v.name == DRAFT_CONFIG for a in assigns.values() for s in a for v in s.values):
            return False
    return True


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
