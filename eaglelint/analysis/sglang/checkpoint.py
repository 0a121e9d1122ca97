"""A checkpoint's served class, and the language model that class builds for it, read from the
checkpoint's `config.json` the way SGLang reads it.

Why from the config: the support matrix judges a class, but a class such as InternVL or Llava
holds a different language model per checkpoint. SGLang decides in two places:

- the served class: `model_loader/utils.py` `get_model_architecture` hands `architectures` to
  `ModelRegistry.resolve_model_cls` (models/registry.py), which returns the class registered
  under `architectures[0]` (the registry keys each `EntryClass` entry by `__name__`: served.py);
  a name no module registers falls back to the Transformers backend (`resolve_transformers_arch`,
  `_normalize_archs` appending `TransformersForCausalLM`), or is refused;
- the held model, in the served class's `__init__`: an if/elif chain on the config
  (InternVL: `config.llm_config.architectures[0] == "Qwen2ForCausalLM"`; DeepSeek-VL2:
  `language_config.use_mla`), or a registry lookup by the name transformers' AutoModelForCausalLM
  gives the text config's model type (Llava's `_get_sgl_model_cls(self.text_config,
  AutoModelForCausalLM)`).

The chain is read from the syntax tree, not from the spelling of a class: any `__init__` whose
branches test values read off its `config` parameter (or `self.config`) and assign
`self.<attr> = SomeClass(...)`. A test this module does not model, a key the config lacks, a
value that is not a class: the pick is unknown, with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..python.entities import ClassEntity
from ..syntax.class_body import class_node, method_node
from .served import served, text_models

if TYPE_CHECKING:
    from ..python.resolve import Resolver

ARCHITECTURES = "architectures"
# transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES (models/auto/modeling_auto.py, 4.57.1): the
# model types whose causal-LM class SGLang 0.5.23 registers. Llava asks AutoModelForCausalLM
# which class serves its text config's class, and then the registry for that name.
CAUSAL_LM_BY_MODEL_TYPE = {
    "apertus": "ApertusForCausalLM", "arcee": "ArceeForCausalLM", "code_llama": "LlamaForCausalLM",
    "cohere": "CohereForCausalLM", "cohere2": "Cohere2ForCausalLM", "dbrx": "DbrxForCausalLM",
    "deepseek_v2": "DeepseekV2ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
    "ernie4_5_moe": "Ernie4_5_MoeForCausalLM", "exaone4": "Exaone4ForCausalLM",
    "falcon_h1": "FalconH1ForCausalLM", "falcon_mamba": "FalconMambaForCausalLM", "gemma": "GemmaForCausalLM",
    "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForConditionalGeneration", "gemma3_text": "Gemma3ForCausalLM",
    "gemma3n": "Gemma3nForConditionalGeneration", "gemma3n_text": "Gemma3nForCausalLM", "glm4": "Glm4ForCausalLM",
    "glm4_moe": "Glm4MoeForCausalLM", "gpt2": "GPT2LMHeadModel", "gpt_bigcode": "GPTBigCodeForCausalLM",
    "gpt_oss": "GptOssForCausalLM", "gptj": "GPTJForCausalLM", "granite": "GraniteForCausalLM",
    "granitemoe": "GraniteMoeForCausalLM", "granitemoehybrid": "GraniteMoeHybridForCausalLM",
    "granitemoeshared": "GraniteMoeSharedForCausalLM", "hunyuan_v1_dense": "HunYuanDenseV1ForCausalLM",
    "hunyuan_v1_moe": "HunYuanMoEV1ForCausalLM", "lfm2": "Lfm2ForCausalLM", "llama": "LlamaForCausalLM",
    "llama4": "Llama4ForCausalLM", "llama4_text": "Llama4ForCausalLM", "longcat_flash": "LongcatFlashForCausalLM",
    "mamba": "MambaForCausalLM", "mamba2": "Mamba2ForCausalLM", "mistral": "MistralForCausalLM",
    "mixtral": "MixtralForCausalLM", "mllama": "MllamaForCausalLM", "olmo": "OlmoForCausalLM",
    "olmo2": "Olmo2ForCausalLM", "olmoe": "OlmoeForCausalLM", "opt": "OPTForCausalLM",
    "persimmon": "PersimmonForCausalLM", "phi": "PhiForCausalLM", "phi3": "Phi3ForCausalLM",
    "qwen2": "Qwen2ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM", "qwen3_next": "Qwen3NextForCausalLM", "stablelm": "StableLmForCausalLM",
    "starcoder2": "Starcoder2ForCausalLM",
}
# transformers' LlavaConfig: a text_config without model_type is read as "llama"
# (models/llava/configuration_llava.py, `text_config.get("model_type", "llama")`)
LLAVA_TEXT_KEY, LLAVA_DEFAULT_MODEL_TYPE = "text_config", "llama"


class ConfigKeyMissing(Exception):
    """The config lacks a key a test reads; `key` names it."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class Unmodelled(Exception):
    """A test or value this module does not evaluate."""


@dataclass(frozen=True)
class Pick:
    """What the served class holds as `self.<attr>` for this config, and why.

    cls is None where it holds nothing eaglelint can judge: `refused` (the class raises for this
    value), `missing` (the config lacks `key`), or the reason in `why`."""

    attr: str
    key: str  # the config key that decides, as written in the class ("llm_config.architectures[0]")
    value: object  # its value in the config (None where missing)
    path: str  # the file and line of the test or lookup that decides
    line: int
    cls: ClassEntity | None = None
    refused: bool = False
    missing: bool = False
    why: str = ""


def key_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out


def config_value(config: dict, path: tuple[str | int, ...]) -> object:
    """The value at path; ConfigKeyMissing naming the first part the config lacks."""
    value: object = config
    for i, part in enumerate(path):
        if isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value):
            value = value[part]
            continue
        if not (isinstance(value, dict) and isinstance(part, str) and part in value):
            raise ConfigKeyMissing(key_text(path[:i + 1]))
        value = value[part]
    return value


def served_class(resolver: Resolver, registry_file: str, arch: str) -> ClassEntity | None:
    """The class `resolve_model_cls([arch])` returns on this tree: the registered one of that name."""
    return served(resolver, registry_file).by_name.get(arch)


class _ConfigReader:
    """Evaluates an `__init__`'s tests against a config: names bound to parts of it are followed."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, config: dict) -> None:
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1:]
        self.config = config
        self.aliases: dict[str, tuple[str | int, ...]] = {"self.config": ()}
        if params:
            self.aliases[params[0]] = ()

    def path(self, node: ast.AST) -> tuple[str | int, ...] | None:
        """The config path an expression reads, or None where it reads none."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return self.aliases.get(f"self.{node.attr}")
            base = self.path(node.value)
            return base + (node.attr,) if base is not None else None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, (int, str)) and not isinstance(node.slice.value, bool):
            base = self.path(node.value)
            return base + (node.slice.value,) if base is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" and \
                len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            base = self.path(node.args[0])
            return base + (node.args[1].value,) if base is not None else None
        return None

    def bind(self, stmt: ast.stmt) -> None:
        """`name = config.x` / `self.name = config.x`: the name reads config.x from here on."""
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, found = stmt.targets[0], self.path(stmt.value)
            name = target.id if isinstance(target, ast.Name) else f"self.{target.attr}" \
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                and target.value.id == "self" else None
            if name is not None and found is not None:
                self.aliases[name] = found
            elif name is not None:
                self.aliases.pop(name, None)

    def test(self, node: ast.AST) -> tuple[bool, tuple[str | int, ...]]:
        """The test's truth for this config, and the config path it reads."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            value, key = self.test(node.operand)
            return not value, key
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right, op = node.left, node.comparators[0], node.ops[0]
            if isinstance(op, (ast.Eq, ast.NotEq)):
                if isinstance(left, ast.Constant):
                    left, right = right, left
                path = self.path(left)
                if path is not None and isinstance(right, ast.Constant):
                    equal = config_value(self.config, path) == right.value
                    return equal if isinstance(op, ast.Eq) else not equal, path
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(left, ast.Constant):
                path = self.path(right)
                if path is not None:
                    held = config_value(self.config, path)
                    inside = isinstance(held, (list, dict, str)) and left.value in held
                    return inside if isinstance(op, ast.In) else not inside, path
            raise Unmodelled(f"line {node.lineno}: a comparison eaglelint does not read")
        path = self.path(node)
        if path is not None:
            return bool(config_value(self.config, path)), path
        raise Unmodelled(f"line {getattr(node, 'lineno', '?')}: a test that reads no config value")


def _assigned_class(resolver: Resolver, path: str, body: list[ast.stmt], attr: str) -> tuple[ClassEntity | None, bool]:
    """The class a branch builds as `self.<attr> = Cls(...)`, and whether the branch raises instead."""
    for stmt in body:
        if isinstance(stmt, ast.Raise):
            return None, True
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
            target, func = stmt.targets[0], stmt.value.func
            if isinstance(target, ast.Attribute) and target.attr == attr and isinstance(target.value, ast.Name) \
                    and target.value.id == "self" and isinstance(func, ast.Name):
                found = [e for e in resolver.lookup(path, func.id) if isinstance(e, ClassEntity)]
                return (found[0] if len(found) == 1 else None), False
    return None, False


def _branches(node: ast.If) -> tuple[list[tuple[ast.expr, list[ast.stmt]]], list[ast.stmt]]:
    """An if/elif chain as (test, body) pairs and its final else."""
    out: list[tuple[ast.expr, list[ast.stmt]]] = []
    while True:
        out.append((node.test, node.body))
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        return out, node.orelse


def _assigns(body: list[ast.stmt], attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, ast.Store)
               and isinstance(n.value, ast.Name) and n.value.id == "self" for s in body for n in ast.walk(s))


def _init_of(resolver: Resolver, cls: ClassEntity) -> tuple[ClassEntity, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The `__init__` that runs for cls (the first up its MRO), with the class that defines it."""
    owner = next((c for c in resolver.mro(cls) if resolver.defines(c, "__init__")), None)
    node = class_node(resolver.project.tree(owner.path), owner.qualname) if owner is not None else None
    fn = method_node(node, "__init__") if node is not None else None
    return (owner, fn) if owner is not None and fn is not None else None


def branch_pick(resolver: Resolver, cls: ClassEntity, attr: str, config: dict) -> Pick | None:
    """The class `self.<attr>` holds where the `__init__` that runs for cls (the first up its MRO)
    builds it in an if/elif chain on config values; None where no such chain assigns it."""
    found = _init_of(resolver, cls)
    if found is None:
        return None
    owner, fn = found
    reader = _ConfigReader(fn, config)
    for stmt in fn.body:
        reader.bind(stmt)
        if not isinstance(stmt, ast.If):
            continue
        branches, last = _branches(stmt)
        if not any(_assigns(body, attr) for _, body in branches) and not _assigns(last, attr):
            continue
        path: tuple[str | int, ...] = ()
        try:
            for test, body in branches:
                value, path = reader.test(test)
                if value:
                    return _picked(resolver, owner, attr, path, config, test.lineno, body)
        except ConfigKeyMissing as exc:
            return Pick(attr, exc.key, None, owner.path, test.lineno, missing=True)
        except Unmodelled as exc:
            return Pick(attr, key_text(path), None, owner.path, stmt.lineno, why=str(exc))
        return _picked(resolver, owner, attr, path, config, stmt.lineno, last)
    return None


def _picked(resolver: Resolver, owner: ClassEntity, attr: str, path: tuple[str | int, ...], config: dict,
            line: int, body: list[ast.stmt]) -> Pick:
    """The branch taken: the class it builds, or that it raises. `path` is the key the last test
    read (its value is in the config: the test read it)."""
    key, value = key_text(path), config_value(config, path)
    found, raises = _assigned_class(resolver, owner.path, body, attr)
    if raises:
        return Pick(attr, key, value, owner.path, line, refused=True)
    why = "" if found is not None else f"the branch at line {line} builds no class eaglelint resolves"
    return Pick(attr, key, value, owner.path, line, cls=found, why=why)



def _registry_lookup(resolver: Resolver, cls: ClassEntity, candidates: list[ClassEntity]) -> bool:
    """`self.<attr>` may be any registered text model: a registry lookup by a name the checkpoint
    gives (Llava's `_get_sgl_model_cls(self.text_config, AutoModelForCausalLM)`)."""
    return len(candidates) >= 2 and set(candidates) == set(text_models(resolver, cls.path))


def registry_candidates(resolver: Resolver, cls: ClassEntity,
                        candidates: list[ClassEntity]) -> list[tuple[ClassEntity, tuple[str, ...]]] | None:
    """Where `self.<attr>` is such a registry lookup, the models a checkpoint can make it: the
    registered classes transformers' causal-LM mapping gives for some text_config.model_type,
    each with those model types, in the table's order. A name the mapping gives that no module
    registers is no model: the class refuses such a checkpoint (llava.py `_get_sgl_model_cls`
    raises). None where the candidates are not the registry's text models."""
    if not _registry_lookup(resolver, cls, candidates):
        return None
    by_name = served(resolver, cls.path).by_name
    out: dict[ClassEntity, list[str]] = {}
    for model_type, arch in CAUSAL_LM_BY_MODEL_TYPE.items():
        found = by_name.get(arch)
        if found is not None:
            out.setdefault(found, []).append(model_type)
    return [(c, tuple(types)) for c, types in out.items()]


def registry_pick(resolver: Resolver, cls: ClassEntity, attr: str, candidates: list[ClassEntity],
                  config: dict) -> Pick | None:
    """Where `self.<attr>` is a registry lookup (`_registry_lookup`), the one this config names:
    transformers' causal-LM class for `text_config.model_type`, then the registry's class of
    that name. None where the candidates are not the registry's text models."""
    if not _registry_lookup(resolver, cls, candidates):
        return None
    holder = next((c for c in resolver.mro(cls) if resolver.assigns(c, attr)), cls)
    line = resolver.assigns(holder, attr)[0].line
    text = config.get(LLAVA_TEXT_KEY)
    if not isinstance(text, dict):
        return Pick(attr, LLAVA_TEXT_KEY, None, holder.path, line, missing=True)
    model_type = text.get("model_type", LLAVA_DEFAULT_MODEL_TYPE)
    key = f"{LLAVA_TEXT_KEY}.model_type"
    arch = CAUSAL_LM_BY_MODEL_TYPE.get(model_type) if isinstance(model_type, str) else None
    if arch is None:
        return Pick(attr, key, model_type, holder.path, line,
                    why=f"which causal-LM class transformers' AutoModelForCausalLM gives model type "
                        f"{model_type!r} is not in eaglelint's table")
    found = served(resolver, cls.path).by_name.get(arch)
    if found is None:
        return Pick(attr, key, model_type, holder.path, line, refused=True,
                    why=f"AutoModelForCausalLM gives {arch}, which no module of the scanned tree registers")
    return Pick(attr, key, model_type, holder.path, line, cls=found, why=f"AutoModelForCausalLM gives {arch}")


class _ValueReader:
    """Evaluates the plain statements of an `__init__` that compute a key from the config
    (MiniCPM-V's version: `version = _MODEL_TYPE_VERSIONS[model_type]`, `version = (2, 6)`,
    `tuple(int(x) for x in str(config.version).split("."))`), with module-level dict literals."""

    def __init__(self, resolver: Resolver, path: str, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                 config: dict) -> None:
        self.config = _ConfigReader(fn, config)
        self.tables: dict[str, ast.Dict] = {}
        for stmt in resolver.project.tree(path).body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Dict):
                self.tables[stmt.targets[0].id] = stmt.value
        self.values: dict[str, object] = {}
        self.read: tuple[str | int, ...] = ()  # the last config path a value or test read

    def table(self, name: str) -> dict[object, ast.expr]:
        """A module-level dict literal, its keys evaluated (Unmodelled where one is not a literal)."""
        node = self.tables.get(name)
        if node is None:
            raise Unmodelled(f"{name} is not a dict literal of the module")
        try:
            return {ast.literal_eval(k): v for k, v in zip(node.keys, node.values, strict=True) if k is not None}
        except ValueError:
            raise Unmodelled(f"a key of {name} is not a literal") from None

    def value(self, node: ast.AST) -> object:
        path = self.config.path(node)
        if path is not None:
            self.read = path
            try:
                return config_value(self.config.config, path)
            except ConfigKeyMissing:
                if isinstance(node, ast.Call) and len(node.args) == 3:  # getattr(config, "k", default)
                    return self.value(node.args[2])
                raise
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.value(e) for e in node.elts)
        if isinstance(node, ast.Name) and node.id in self.values:
            return self.values[node.id]
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            entry = self.table(node.value.id).get(self.value(node.slice))
            if entry is None:
                raise Unmodelled(f"line {node.lineno}: a key {node.value.id} does not hold")
            return ast.literal_eval(entry)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "tuple") \
                and len(node.args) == 1:
            inner = node.args[0]
            if node.func.id == "tuple" and isinstance(inner, ast.ListComp | ast.GeneratorExp) \
                    and isinstance(inner.elt, ast.Call) and isinstance(inner.elt.func, ast.Name) \
                    and inner.elt.func.id == "int" and len(inner.generators) == 1:
                return tuple(int(x) for x in self.value(inner.generators[0].iter))  # type: ignore[attr-defined]
            found = self.value(inner)
            return str(found) if node.func.id == "str" else tuple(found)  # type: ignore[arg-type]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
                and len(node.args) == 1:
            return tuple(str(self.value(node.func.value)).split(str(self.value(node.args[0]))))
        raise Unmodelled(f"line {getattr(node, 'lineno', '?')}: a value eaglelint does not evaluate")

    def test(self, node: ast.AST) -> bool:
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.test(node.operand)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr" \
                and len(node.args) == 2:
            path = self.config.path(ast.Call(ast.Name("getattr"), [node.args[0], node.args[1]], []))
            if path is None:
                raise Unmodelled(f"line {node.lineno}: hasattr on what is not the config")
            self.read = path
            try:
                config_value(self.config.config, path)
            except ConfigKeyMissing:
                return False
            return True
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In | ast.NotIn) \
                and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id in self.tables:
            inside = self.value(node.left) in self.table(node.comparators[0].id)
            return inside if isinstance(node.ops[0], ast.In) else not inside
        return self.config.test(node)[0]

    def run(self, stmts: list[ast.stmt], stop: ast.stmt) -> bool:
        """Runs the assignments and if/elif chains before `stop`; False where it meets `stop`'s block."""
        for stmt in stmts:
            if stmt is stop:
                return False
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    self.values[stmt.targets[0].id] = self.value(stmt.value)
                except Unmodelled:
                    self.values.pop(stmt.targets[0].id, None)
            elif isinstance(stmt, ast.If):
                if not self.run(stmt.body if self.test(stmt.test) else stmt.orelse, stop):
                    return False
            else:
                self.config.bind(stmt)
        return True


def table_pick(resolver: Resolver, cls: ClassEntity, attr: str, config: dict) -> Pick | None:
    """Where the `__init__` that runs for cls builds `self.<attr>` from a class it reads out of a
    module-level table by a key computed from the config (`instance_class = _SUPPORT_VERSION.get(
    version)`, MiniCPM-V), the class this config gives; None where it does not build it so."""
    found = _init_of(resolver, cls)
    if found is None:
        return None
    owner, fn = found
    made: dict[str, ast.Call] = {}  # local -> the table lookup it holds
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            value = stmt.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
                    and isinstance(value.func.value, ast.Name) and len(value.args) == 1:
                made[stmt.targets[0].id] = value
    built = next(((s, made[s.value.func.id]) for s in ast.walk(fn) if isinstance(s, ast.Assign)
                  and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
                  and s.value.func.id in made and any(isinstance(t, ast.Name) for t in s.targets)
                  or isinstance(s, ast.Assign) and _assigns([s], attr) and isinstance(s.value, ast.Call)
                  and isinstance(s.value.func, ast.Name) and s.value.func.id in made), None)
    if built is None:
        return None
    lookup = built[1]
    table = lookup.func.value.id  # type: ignore[attr-defined]
    reader = _ValueReader(resolver, owner.path, fn, config)
    stop = next(s for s in fn.body if any(n is lookup for n in ast.walk(s)))
    try:
        reader.run(fn.body, stop)
        key = reader.value(lookup.args[0])
        chosen = reader.table(table).get(key)
    except ConfigKeyMissing as exc:
        return Pick(attr, exc.key, None, owner.path, lookup.lineno, missing=True)
    except Unmodelled as exc:
        return Pick(attr, key_text(reader.read), None, owner.path, lookup.lineno, why=str(exc))
    said = key_text(reader.read)
    try:  # what the config says there (absent: the class's own default applied)
        raw = config_value(config, reader.read) if reader.read else None
    except ConfigKeyMissing:
        raw = None
    name = ast.unparse(lookup.args[0])
    if chosen is None:
        return Pick(attr, said, raw, owner.path, lookup.lineno, refused=True,
                    why=f"{name} is {key!r}, for which {table} has no entry")
    classes = [e for e in resolver.lookup(owner.path, chosen.id) if isinstance(e, ClassEntity)] \
        if isinstance(chosen, ast.Name) else []
    where = f"{name} is {key!r}, and {table}[{key!r}]"
    if len(classes) != 1:
        return Pick(attr, said, raw, owner.path, lookup.lineno, why=f"{where} is no class eaglelint resolves")
    return Pick(attr, said, raw, owner.path, lookup.lineno, cls=classes[0], why=f"{where} is {classes[0].qualname}")
