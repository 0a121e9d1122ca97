"""The `vllm` pack on a real vLLM release (model code fetched from the registry, cached).

Every expected row below was read from vLLM 0.33.0's source by hand, not taken from
the tool: the wrapper's class header (and every base's) does not list SupportsEagle3;
the line that builds its language model (a class call, `init_llm` per subclass, or a
loader whose `architectures=[...]` the registry maps to a module and class); and the
header that lists SupportsEagle3 (the language model's, or the base it inherits it
from). The test then re-reads those facts with `ast` (bases, registry tables, the
fixed class body), independently of eaglelint's resolver.
"""

import ast
import shutil
from pathlib import Path

import pytest
from fetch_sglang import VLLM_VERSION, vllm_model_dirs, vllm_root

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix.plan import plan_fixes, write_fix
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release
MODELS = "vllm/model_executor/models/"
SETTER = "set_aux_hidden_state_layers"
# (wrapper file, wrapper class, attribute path, file and class listing SupportsEagle3
# that the language model is or derives from, members the fix must forward)
MARKER_GAPS = [
    # loader + registry: architectures=["Qwen2ForCausalLM"] -> ("qwen2", "Qwen2ForCausalLM")
    (MODELS + "audioflamingo3.py", "AudioFlamingo3ForConditionalGeneration", "language_model", "qwen2.py",
     "Qwen2ForCausalLM", ()),
    (MODELS + "bagel.py", "BagelForConditionalGeneration", "language_model", "qwen2.py", "Qwen2ForCausalLM", ()),
    (MODELS + "dots_ocr.py", "DotsOCRForCausalLM", "language_model", "qwen2.py", "Qwen2ForCausalLM", ()),
    (MODELS + "kimi_audio.py", "KimiAudioForConditionalGeneration", "language_model", "qwen2.py",
     "Qwen2ForCausalLM", ()),  # through vllm_config.with_hf_config(self.config, architectures=[...])
    (MODELS + "qwen2_5_omni_thinker.py", "Qwen2_5OmniThinkerForConditionalGeneration", "language_model",
     "qwen2.py", "Qwen2ForCausalLM", ()),
    (MODELS + "qwen2_audio.py", "Qwen2AudioForConditionalGeneration", "language_model", "qwen2.py",
     "Qwen2ForCausalLM", ()),
    (MODELS + "qwen2_vl.py", "Qwen2VLForConditionalGeneration", "language_model", "qwen2.py", "Qwen2ForCausalLM",
     ()),
    # architectures=["Qwen3ForCausalLM"] -> ("qwen3", "Qwen3ForCausalLM")
    (MODELS + "funaudiochat.py", "FunAudioChatForConditionalGeneration", "language_model", "qwen3.py",
     "Qwen3ForCausalLM", ()),
    (MODELS + "isaac.py", "IsaacForConditionalGeneration", "language_model", "qwen3.py", "Qwen3ForCausalLM", ()),
    (MODELS + "llava_onevision2.py", "LlavaOnevision2ForConditionalGeneration", "language_model", "qwen3.py",
     "Qwen3ForCausalLM", ()),
    (MODELS + "moss_transcribe_diarize.py", "MossTranscribeDiarizeForConditionalGeneration", "language_model",
     "qwen3.py", "Qwen3ForCausalLM", ()),
    # BaseKeyeModule (keye.py) is not registered; KeyeForConditionalGeneration (keye.py) and
    # KeyeVL1_5ForConditionalGeneration (keye_vl1_5.py) are, and inherit its language model
    (MODELS + "keye.py", "BaseKeyeModule", "language_model", "qwen3.py", "Qwen3ForCausalLM", ()),
    # architectures=["LlamaForCausalLM"] -> ("llama", "LlamaForCausalLM")
    (MODELS + "glmasr.py", "GlmAsrForConditionalGeneration", "language_model", "llama.py", "LlamaForCausalLM", ()),
    (MODELS + "kanana_v.py", "KananaVForConditionalGeneration", "language_model", "llama.py", "LlamaForCausalLM",
     ()),
    (MODELS + "phi3v.py", "Phi3VForCausalLM", "language_model", "llama.py", "LlamaForCausalLM", ()),
    # architectures=["Phi3ForCausalLM"] -> Phi3ForCausalLM(LlamaForCausalLM)
    (MODELS + "phi4siglip.py", "Phi4ForCausalLMV", "language_model", "llama.py", "LlamaForCausalLM", ()),
    # a class call: MossQwen3ForCausalLM(Qwen3ForCausalLM), Ernie4_5ForCausalLM(LlamaForCausalLM)
    (MODELS + "moss_audio.py", "MossAudioModel", "language_model", "qwen3.py", "Qwen3ForCausalLM", ()),
    (MODELS + "paddleocr_vl.py", "PaddleOCRVLForConditionalGeneration", "language_model", "llama.py",
     "LlamaForCausalLM", ()),
    # held under other names: MiniCPMVBaseModel assigns `self.llm = self.init_llm(...)` inside
    # `with self._mark_language_model(...)` (get_language_model() finds it); each version's
    # init_llm builds its own model; the registered MiniCPMV.__new__ returns those versions
    (MODELS + "minicpmv.py", "MiniCPMV2_0", "llm", "minicpm.py", "MiniCPMForCausalLM", ()),
    (MODELS + "minicpmv.py", "MiniCPMV2_5", "llm", "llama.py", "LlamaForCausalLM", ()),
    (MODELS + "minicpmv.py", "MiniCPMV2_6", "llm", "qwen2.py", "Qwen2ForCausalLM", ()),  # and MiniCPMO(2_6)
    (MODELS + "minicpmv.py", "MiniCPMV4_0", "llm", "llama.py", "LlamaForCausalLM", ()),
    (MODELS + "minicpmv.py", "MiniCPMV4_5", "llm", "qwen3.py", "Qwen3ForCausalLM", ()),  # and MiniCPMO4_5
    # self.decoder (marked), and self.model.decoder (_mark_composite_model(language_targets=Qwen2ForCausalLM))
    (MODELS + "midashenglm.py", "MiDashengLMModel", "decoder", "qwen2.py", "Qwen2ForCausalLM", ()),
    (MODELS + "fireredasr2.py", "FireRedASR2ForConditionalGeneration", "model.decoder", "qwen2.py",
     "Qwen2ForCausalLM", ()),
    # DeepseekV2-style: DeepseekV2ForCausalLM sets self.model.aux_hidden_state_layers itself, its
    # DeepseekV2Model is no EagleModelMixin, so the protocol's default setter would assert
    (MODELS + "kimi_vl.py", "KimiVLForConditionalGeneration", "language_model", "deepseek_v2.py",
     "DeepseekV2ForCausalLM", (SETTER,)),
    ("vllm/models/dots3_note/nvidia/multimodal.py", "Dots3NoteForCausalLM", "language_model", "deepseek_v2.py",
     "DeepseekV2ForCausalLM", (SETTER,)),
    # UnlimitedOCRForCausalLM(DeepseekOCRForCausalLM) inherits `hf_config=self.text_config` (no
    # architectures=), but config.py's MODELS_CONFIG_MAP["UnlimitedOCRForCausalLM"] update, which
    # vllm/config/model.py runs before building the model, writes text_config.architectures =
    # ["DeepseekV2ForCausalLM"] (config.py:291); DeepseekOCRForCausalLM itself has no such update
    (MODELS + "unlimited_ocr.py", "UnlimitedOCRForCausalLM", "language_model", "deepseek_v2.py",
     "DeepseekV2ForCausalLM", (SETTER,)),
]
# Granite 4 Vision's decoder (Granite4VisionLLMModel) overrides forward without collecting aux hidden states
DECODER_GAPS = {("granite4_vision.py", "Granite4VisionForConditionalGeneration")}
# Held through a loader whose architecture the checkpoint's config names (no literal):
# `hf_config=config.text_config` (or get_text_config(), self.text_config, wrapped_model_config)
# without `architectures=`, or `architectures=config.text_config.architectures`; glm4_1v's
# third branch is `architectures = None`. None of these classes lists SupportsEagle3, so
# gpu_model_runner's supports_eagle3() check refuses EAGLE-3 whatever the checkpoint names:
# EGL030 over every registered text model. Among those, DeepseekV2ForCausalLM
# (deepseek_v2.py:1955) and others define their own set_aux_hidden_state_layers, and
# TransformersForCausalLM (transformers/base.py:867, via Base) its own
# get_eagle3_default_aux_hidden_state_layers; none of these wrappers defines either, so the
# fix forwards both, raising where the class held lacks them.
FROM_CHECKPOINT = {
    "blip2.py": "Blip2ForConditionalGeneration", "cohere2_vision.py": "Cohere2VisionForConditionalGeneration",
    "deepseek_ocr.py": "DeepseekOCRForCausalLM", "deepseek_ocr2.py": "DeepseekOCR2ForCausalLM",
    "deepseek_vl2.py": "DeepseekVLV2ForCausalLM", "eagle2_5_vl.py": "Eagle2_5_VLForConditionalGeneration",
    "glm4_1v.py": "Glm4vForConditionalGeneration", "granite_speech.py": "GraniteSpeechForConditionalGeneration",
    "hyperclovax_vision_v2.py": "HCXVisionV2ForCausalLM", "interns1.py": "InternS1ForConditionalGeneration",
    "internvl.py": "InternVLChatModel", "lfm2_vl.py": "Lfm2VLForConditionalGeneration",
    "llava_next.py": "LlavaNextForConditionalGeneration",
    "llava_next_video.py": "LlavaNextVideoForConditionalGeneration",
    "llava_onevision.py": "LlavaOnevisionForConditionalGeneration", "nemotron_vl.py": "LlamaNemotronVLChatModel",
    "openvla.py": "OpenVLAForActionPrediction", "ovis.py": "Ovis", "ovis2_5.py": "Ovis2_5",
    "skyworkr1v.py": "SkyworkR1VChatModel",
    "step3_vl.py": "Step3VLForConditionalGeneration", "ultravox.py": "UltravoxModel",
    "voxtral.py": "VoxtralForConditionalGeneration",
}
# PaliGemma writes config.text_config.architectures = ["GemmaForCausalLM"] / ["Gemma2ForCausalLM"]
# on the two branches of an if (paligemma.py:288-291) before its loader reads config.text_config:
# neither class lists SupportsEagle3, so nothing is missing whichever the config picks
WRITTEN_ON_EVERY_BRANCH = ("paligemma.py", "PaliGemmaForConditionalGeneration",
                           ("GemmaForCausalLM", "Gemma2ForCausalLM"))
# Wrappers that list SupportsEagle3 while the checkpoint picks their language model: nothing missing
DECLARED = {("llava.py", "LlavaForConditionalGeneration"), ("mistral3.py", "Mistral3ForConditionalGeneration"),
            ("pixtral.py", "PixtralForConditionalGeneration"), ("lightonocr.py", "LightOnOCRForConditionalGeneration")}


# The registered text models such a loader may build (vllm_registry.text_models), counted
# by the separate ast reading below (text_model_classes): 120 classes, 51 listing
# SupportsEagle3. eaglelint counts 119: Qwen4ExpForCausalLM's ROCm class
# (vllm/models/qwen4_exp/amd/model.py) is bound only by the package's module-level
# __getattr__, which its resolver does not follow; that class does not list the marker.
TEXT_MODELS, LISTING = 119, 51
UNFOLLOWED_BINDING = ("vllm/models/qwen4_exp/amd/model.py", "Qwen4ExpForCausalLM")


def check(roots: list[Path], project: Project | None = None):
    options = CheckOptions(tuple(select_interfaces(["vllm"])))
    return check_files(discover(roots).files, options, project).findings


def by_code(findings, code):
    return {(Path(f.path).name, f.class_name) for f in findings if f.code == code}


def class_node(path: Path, name: str) -> ast.ClassDef:
    return next(n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef) and n.name == name)


def base_names(node: ast.ClassDef) -> list[str]:
    return [ast.unparse(b) for b in node.bases]


def registry_classes(root: Path) -> set[str]:
    """Class names in registry.py's literal tables, read with ast (independent of eaglelint)."""
    tree = ast.parse((root / MODELS / "registry.py").read_text())
    return {v.elts[1].value for n in ast.walk(tree) if isinstance(n, ast.Dict) for v in n.values
            if isinstance(v, ast.Tuple) and len(v.elts) == 2 and isinstance(v.elts[1], ast.Constant)}


@pytest.fixture(scope="module")
def findings():
    assert VLLM_VERSION == "0.33.0"
    return check(vllm_model_dirs())


def test_vllm_0_33_expected_rows_hold_in_the_source():
    """The derivation above, re-read with ast: the wrapper lacks the marker, the lister lists it."""
    root = vllm_root()
    for path, cls, _, lister_file, lister, _ in MARKER_GAPS:
        assert "SupportsEagle3" not in base_names(class_node(root / path, cls)), cls
        lister_path = next(p for d in vllm_model_dirs() for p in d.rglob(lister_file))
        assert "SupportsEagle3" in base_names(class_node(lister_path, lister)), lister
    served = registry_classes(root)
    for name, cls in FROM_CHECKPOINT.items():  # unmarked, served, loader given no literal architectures
        node = class_node(root / MODELS / name, cls)
        assert "SupportsEagle3" not in base_names(node) and cls in served, cls
        calls = [c for c in ast.walk(function_node(node, "__init__")) if isinstance(c, ast.Call)
                 and ast.unparse(c.func) == "init_vllm_registered_model"]
        hf = [k for c in calls for k in c.keywords
              if k.arg == "hf_config" or k.arg == "vllm_config" and "with_hf_config" in ast.unparse(k.value)]
        assert len(calls) == 1 and hf, cls
        assert not [k for k in calls[0].keywords if k.arg == "architectures" and isinstance(k.value, ast.List)], cls
    assert {"KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration", "MiniCPMV"} <= served
    assert "BaseKeyeModule" not in served and "MiniCPMV2_6" not in served  # reached as subclass / __new__


def function_node(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    return next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name)


def architectures_written(stmts: list[ast.stmt]) -> list[list[str]]:
    """`<x>.architectures = ["A", ...]` among these statements (not nested), as lists of names."""
    return [[e.value for e in st.value.elts] for st in stmts if isinstance(st, ast.Assign)
            and isinstance(st.targets[0], ast.Attribute) and st.targets[0].attr == "architectures"
            and isinstance(st.value, ast.List)]


def registry_entry(root: Path, arch: str) -> tuple[str, str]:
    tree = ast.parse((root / MODELS / "registry.py").read_text())
    return next(tuple(e.value for e in v.elts) for n in ast.walk(tree) if isinstance(n, ast.Dict)
                for k, v in zip(n.keys, n.values, strict=True) if isinstance(k, ast.Constant) and k.value == arch
                and isinstance(v, ast.Tuple))


def test_vllm_0_33_choices_written_by_vllm_hold_in_the_source():
    """Unlimited-OCR's config update and PaliGemma's two branches, re-read with ast."""
    root = vllm_root()
    config = ast.parse((root / MODELS / "config.py").read_text())
    table = next(n.value for n in config.body if isinstance(n, ast.AnnAssign) and n.target.id == "MODELS_CONFIG_MAP")
    entry = dict(zip([k.value for k in table.keys], table.values, strict=True))["UnlimitedOCRForCausalLM"]
    update = function_node(next(n for n in config.body if isinstance(n, ast.ClassDef) and n.name == entry.id),
                           "verify_and_update_model_config")
    assert ast.unparse(update.body[0]) == "text_config = model_config.hf_config.text_config"
    assert architectures_written(update.body) == [["DeepseekV2ForCausalLM"]]  # unconditional
    assert "DeepseekOCRForCausalLM" not in [k.value for k in table.keys]
    assert registry_entry(root, "UnlimitedOCRForCausalLM") == ("unlimited_ocr", "UnlimitedOCRForCausalLM")
    assert base_names(class_node(root / MODELS / "unlimited_ocr.py", "UnlimitedOCRForCausalLM")) == \
        ["DeepseekOCRForCausalLM"]
    loader = ast.unparse(function_node(class_node(root / MODELS / "deepseek_ocr.py", "DeepseekOCRForCausalLM"),
                                       "__init__"))
    assert "hf_config=self.text_config" in loader and "architectures=" not in loader
    assert "self.text_config = config.text_config" in loader

    glm = function_node(class_node(root / MODELS / "glm4_1v.py", "Glm4vForConditionalGeneration"), "__init__")
    branch = next(n for n in glm.body if isinstance(n, ast.If) and "architectures" in ast.unparse(n.body[0]))
    assert [ast.unparse(branch.body[0].value), ast.unparse(branch.orelse[0].body[0].value),
            ast.unparse(branch.orelse[0].orelse[0].value)] == ["['Glm4ForCausalLM']", "['Glm4MoeForCausalLM']", "None"]
    for name in ("Glm4ForCausalLM", "Glm4MoeForCausalLM"):
        module, lm = registry_entry(root, name)
        assert "SupportsEagle3" not in base_names(class_node(root / MODELS / f"{module}.py", lm)), lm

    path, cls, names = WRITTEN_ON_EVERY_BRANCH
    init = function_node(class_node(root / MODELS / path, cls), "__init__")
    branch = next(n for n in init.body if isinstance(n, ast.If) and architectures_written(n.body))
    assert architectures_written(branch.body) + architectures_written(branch.orelse) == [[n] for n in names]
    assert ast.unparse(branch.body[0].targets[0]) == "config.text_config.architectures"
    assert "hf_config=config.text_config" in ast.unparse(init)
    for name in names:
        module, lm = registry_entry(root, name)
        assert "SupportsEagle3" not in base_names(class_node(root / MODELS / f"{module}.py", lm)), lm


def test_vllm_0_33_wrappers_missing_supports_eagle3(findings):
    assert by_code(findings, "EGL030") == {(Path(p).name, c) for p, c, *_ in MARKER_GAPS} | set(FROM_CHECKPOINT.items())
    assert by_code(findings, "EGL031") == DECODER_GAPS
    assert not by_code(findings, "EGL999")


def test_vllm_0_33_checkpoint_choices_are_gaps_over_every_text_model(findings):
    chosen = [f for f in findings if (Path(f.path).name, f.class_name) in FROM_CHECKPOINT.items()]
    assert {(Path(f.path).name, f.class_name) for f in chosen} == set(FROM_CHECKPOINT.items())
    assert {f.code for f in chosen} == {"EGL030"}
    assert all("checkpoint's config" in f.sentence and "architectures" in f.sentence for f in chosen)
    assert all(f"any of {TEXT_MODELS} registered text models, {LISTING} of which list" in f.message
               for f in chosen)
    assert not by_code(findings, "EGL010")  # every checkpoint's choice has its candidates
    assert not {(Path(f.path).name, f.class_name) for f in findings} & DECLARED
    assert not {(Path(f.path).name, f.class_name) for f in findings} & {WRITTEN_ON_EVERY_BRANCH[:2]}
    # glm4_1v.py:1800-1805: ["Glm4ForCausalLM"] / ["Glm4MoeForCausalLM"] (neither lists the marker:
    # glm4.py:232, glm4_moe.py:534) or `architectures = None` for any other model_type: the
    # checkpoint's; both literals are registered text models, so the union is the same set
    glm = next(f for f in chosen if f.class_name == "Glm4vForConditionalGeneration")
    assert "Glm4MoeForCausalLM, Glm4ForCausalLM or chosen at load time" in glm.sentence


def registry_tables(root: Path) -> dict[str, dict[str, tuple[str, str]]]:
    """registry.py's dict literals by name, `**_OTHER` spread as Python does."""
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for node in ast.parse((root / MODELS / "registry.py").read_text()).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            table: dict[str, tuple[str, str]] = {}
            for k, v in zip(node.value.keys, node.value.values, strict=True):
                if k is None:
                    table.update(tables.get(getattr(v, "id", ""), {}))
                elif isinstance(v, ast.Tuple):
                    table[k.value] = (v.elts[0].value, v.elts[1].value)
            tables[(node.targets[0] if isinstance(node, ast.Assign) else node.target).id] = table
    return tables


class Bindings:
    """Which classes a name is bound to in a module, read with ast: its own top-level
    classes, and each `from M import N as B` anywhere in it (any platform's branch, a
    module __getattr__'s body), followed."""

    def __init__(self, root: Path):
        self.root = root
        self.index: dict[Path, tuple[dict[str, list[ast.ClassDef]], list[tuple[str, str, str]]]] = {}
        self.bound: dict[tuple[Path, str], list[tuple[Path, ast.ClassDef]]] = {}

    def module_file(self, dotted: str) -> Path | None:
        base = self.root / dotted.replace(".", "/")
        return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)

    def read(self, path: Path) -> tuple[dict[str, list[ast.ClassDef]], list[tuple[str, str, str]]]:
        if path not in self.index:
            tree = ast.parse(path.read_text())
            classes: dict[str, list[ast.ClassDef]] = {}
            for n in tree.body:
                if isinstance(n, ast.ClassDef):
                    classes.setdefault(n.name, []).append(n)
            package = ".".join(path.relative_to(self.root).parent.parts)  # a module's or an __init__'s
            imports = []
            for n in ast.walk(tree):
                if isinstance(n, ast.ImportFrom):
                    base = package
                    for _ in range(n.level - 1):
                        base = base.rsplit(".", 1)[0]
                    dotted = n.module if not n.level else f"{base}.{n.module}" if n.module else base
                    imports += [(a.asname or a.name, dotted, a.name) for a in n.names]
            self.index[path] = (classes, imports)
        return self.index[path]

    def of(self, path: Path, name: str, depth: int = 0) -> list[tuple[Path, ast.ClassDef]]:
        if (path, name) not in self.bound:
            classes, imports = self.read(path)
            out = [(path, n) for n in classes.get(name, [])]
            for bound, dotted, original in imports if depth < 8 else ():
                target = self.module_file(dotted) if bound == name else None
                out += self.of(target, original, depth + 1) if target else []
            self.bound[(path, name)] = out
        return self.bound[(path, name)]

    def ancestors(self, path: Path, node: ast.ClassDef) -> list[ast.ClassDef | str]:
        """The class and its bases, followed by name (a base not found stays a name)."""
        out: list[ast.ClassDef | str] = [node]
        for base in node.bases:
            name = ast.unparse(base.value if isinstance(base, ast.Subscript) else base).rsplit(".", 1)[-1]
            found = [b for b in self.of(path, name) if b[1] is not node]  # `class X(X)`: the imported X
            out += self.ancestors(*found[0]) if found else [name]
        return out


def is_text_model(chain: list[ast.ClassDef | str]) -> bool:
    classes = [c for c in chain if isinstance(c, ast.ClassDef)]
    names = {c if isinstance(c, str) else c.name for c in chain}
    attrs = {n.attr for c in classes for n in ast.walk(c) if isinstance(n, ast.Attribute)}
    assigned = {ast.unparse(t) for c in classes for n in ast.walk(c) if isinstance(n, ast.Assign) for t in n.targets}
    return any(isinstance(s, ast.FunctionDef) and s.name == "compute_logits" for c in classes for s in c.body) \
        and "SupportsMultiModal" not in names and "self.language_model" not in assigned \
        and "draft_model_config" not in attrs


def text_model_classes(root: Path) -> dict[tuple[str, str], bool]:
    """(file, class) -> lists SupportsEagle3, for every registered text model, read with ast
    alone: the architectures of registry.py's tables but the draft and pooling-only ones,
    every class the registered module binds to the name, whose bases define
    compute_logits, do not list SupportsMultiModal, assign no self.language_model, and
    never read `draft_model_config`."""
    tables = registry_tables(root)
    excluded = ("_SPECULATIVE_DECODING_MODELS", "_EMBEDDING_MODELS", "_LATE_INTERACTION_MODELS", "_REWARD_MODELS",
                "_TOKEN_CLASSIFICATION_MODELS", "_SEQUENCE_CLASSIFICATION_MODELS")
    kept = {a for name, t in tables.items() if name not in excluded and name != "_VLLM_MODELS" for a in t}
    bindings = Bindings(root)
    result = {}
    for arch, (module, name) in tables["_VLLM_MODELS"].items():
        dotted = module if module.startswith("vllm.") else f"vllm.model_executor.models.{module}"
        registered = bindings.module_file(dotted)
        for path, node in bindings.of(registered, name) if arch in kept and registered else ():
            chain = bindings.ancestors(path, node)
            if is_text_model(chain):
                result[(path.relative_to(root).as_posix(), node.name)] = "SupportsEagle3" in \
                    {c if isinstance(c, str) else c.name for c in chain}
    return result


def test_vllm_0_33_text_models_counted_independently():
    found = text_model_classes(vllm_root())
    assert UNFOLLOWED_BINDING in found and not found[UNFOLLOWED_BINDING]
    assert len(found) == TEXT_MODELS + 1 and sum(found.values()) == LISTING
    named = {cls for _, cls in found}
    assert {"Qwen2ForCausalLM", "LlamaForCausalLM", "GemmaForCausalLM", "TransformersForCausalLM"} <= named
    assert not {"TransformersForMTP", "LlavaForConditionalGeneration", "Qwen3VLForConditionalGeneration"} & named


def test_vllm_0_33_subclasses_in_other_files_are_named(findings):
    keye = next(f for f in findings if f.class_name == "BaseKeyeModule")
    assert set(keye.subclasses) == {"KeyeForConditionalGeneration", "KeyeVL1_5ForConditionalGeneration (keye_vl1_5.py)"}
    minicpm = next(f for f in findings if f.class_name == "MiniCPMV2_6")
    assert set(minicpm.subclasses) == {"MiniCPMO2_6 (minicpmo.py)", "MiniCPMO (minicpmo.py)"}
    # the config update decides Unlimited-OCR's language model: judged on its own, not its base's
    ocr = next(f for f in findings if f.class_name == "DeepseekOCRForCausalLM")
    assert ocr.subclasses == ()


def checkpoint_gaps(root: Path) -> list[tuple[str, str, str]]:
    """(file, class, attribute) of FROM_CHECKPOINT, the attribute read with ast: the one
    assigned a loader's result (Ovis and Ovis2_5 hold it as self.llm)."""
    out = []
    for name, cls in FROM_CHECKPOINT.items():
        init = ast.unparse(function_node(class_node(root / MODELS / name, cls), "__init__"))
        out.append((MODELS + name, cls, "llm" if "self.llm = init_vllm_registered_model(" in init
                    else "language_model"))
    return out


def test_vllm_0_33_fix_adds_the_marker_and_forwards_where_needed(tmp_path):
    shutil.copytree(vllm_root() / "vllm", tmp_path / "vllm")
    roots = [tmp_path / d.relative_to(vllm_root()) for d in vllm_model_dirs()]
    project = Project()
    plan = plan_fixes(check(roots, project), project)
    chosen = checkpoint_gaps(tmp_path)
    assert {p.path.relative_to(tmp_path).as_posix() for p in plan.files} == \
        {p for p, *_ in MARKER_GAPS} | {p for p, *_ in chosen}
    for file_fix in plan.files:
        write_fix(file_fix)
    for file_fix in plan.files:
        ast.parse(file_fix.path.read_text())
    for path, cls, attr, _, _, forwards in MARKER_GAPS:
        node = class_node(tmp_path / path, cls)
        assert base_names(node)[-1] == "SupportsEagle3", cls
        defined = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
        for name in (SETTER, "get_eagle3_default_aux_hidden_state_layers"):
            if name in forwards:
                assert ast.unparse(defined[name].body[-1].value.func) == f"self.{attr}.{name}", cls
            else:
                assert name not in defined, cls  # the marker alone: nothing else written
    for path, cls, attr in chosen:  # both forwarded, each first raising where the class held lacks it
        node = class_node(tmp_path / path, cls)
        assert base_names(node)[-1] == "SupportsEagle3", cls
        defined = {n.name: n for n in node.body if isinstance(n, ast.FunctionDef)}
        for name in (SETTER, "get_eagle3_default_aux_hidden_state_layers"):
            guard, call = defined[name].body
            assert ast.unparse(guard.test) == f"not hasattr(self.{attr}, '{name}')", cls
            assert isinstance(guard.body[0], ast.Raise)
            assert ast.unparse(call.value.func) == f"self.{attr}.{name}", cls
    left = check(roots)
    assert not by_code(left, "EGL030") and not [f for f in left if f.fixable]


# The capture chain on 0.33.0 (analysis/vllm/vllm_chain.py), each row read by hand in the source:
CHAIN_BREAKS = {
    # the wrapper inherits SupportsEagle3 from Qwen2_5_VLForConditionalGeneration; its
    # language model, Exaone4ForCausalLM (registry: exaone4), holds Exaone4Model(nn.Module),
    # no EagleModelMixin: the protocol's default asserts (interfaces.py:1746)
    ("exaone4_5.py", "Exaone4_5_ForConditionalGeneration"): "EGL050",
    # lists SupportsEagle3; get_language_model() finds self.language_model (marked), a
    # CohereCompassForCausalLM whose .model is CohereCompassTextModel(nn.Module): the assert fails
    ("cohere_compass.py", "CohereCompassForConditionalGeneration"): "EGL050",
    # inherits SupportsEagle3 through Qwen3_5ForConditionalGeneration; self.language_model is a
    # Qwen4ExpForCausalLM, whose Qwen4ExpModel(nn.Module) is no EagleModelMixin: the assert fails
    ("model.py", "Qwen4ExpForConditionalGeneration"): "EGL050",
    # inherits SupportsEagle3 and the default setter from Qwen2ForCausalLM; MiMoModel(Qwen2Model)
    # is a mixin (the write lands) but its forward override (mimo.py:60) never reads
    # aux_hidden_state_layers and returns a tensor, which the runner unpacks as a pair
    ("mimo.py", "MiMoForCausalLM"): "EGL051",
}
# Chains followed to a decoder that collects and returns the list, read by hand: the protocol's
# default to self.model (llama.py, qwen3_moe.py: the list made in the helper's call; plamo3.py:
# Plamo3Model._set_aux_hidden_state_layers forwards to self.layers, a Plamo3Decoder returning a
# 3-tuple that Plamo3Model packs again); an own setter (deepseek_v2.py:1955 writes
# self.model.aux_hidden_state_layers, read at :1561); a delegation (kimi_k25.py:470 to a
# DeepseekV2ForCausalLM); a marked language model (qwen3_vl.py); minicpm.py unpacks and packs again.
CHAINS_HOLD = {
    ("llama.py", "LlamaForCausalLM"): "LlamaModel", ("qwen3_moe.py", "Qwen3MoeForCausalLM"): "Qwen3MoeModel",
    ("plamo3.py", "Plamo3ForCausalLM"): "Plamo3Decoder", ("deepseek_v2.py", "DeepseekV2ForCausalLM"): "DeepseekV2Model",
    ("kimi_k25.py", "KimiK25ForConditionalGeneration"): "DeepseekV2Model",
    ("qwen3_vl.py", "Qwen3VLForConditionalGeneration"): "Qwen3LLMModel",
    ("minicpm.py", "MiniCPMForCausalLM"): "MiniCPMModel",
}


# Chains that cannot be followed (never a finding), read by hand: the language model is chosen
# by the checkpoint (mistral3.py, lightonocr.py, pixtral.py, nano_nemotron_vl.py: a loader given
# only hf_config=...text_config); MiniMaxM3SparseForConditionalGeneration builds its language model
# outside `_mark_language_model`, so get_language_model() takes the first child with
# embed_input_ids; KimiLinearForCausalLM.forward (kimi_k3 model.py:1473) may return a specialized
# decode's result or `decode.normalize(hidden_states)`. (The Transformers backend's classes,
# defined in transformers/__init__.py, which does not mention vllm_config, are not read; their
# setter, transformers/base.py:845, records outputs through Hugging Face hooks: unknown too.)
# llava.py: a `["MistralForCausalLM"]` literal where the text config names no architecture
# (llava.py:542-545), else the checkpoint's choice: the protocol's tests on self.language_model
# cannot be decided for what may be held, so the chain is not judged at the wrapper.
CHAINS_UNKNOWN = {"LlavaForConditionalGeneration", "Mistral3ForConditionalGeneration",
                  "LightOnOCRForConditionalGeneration", "PixtralForConditionalGeneration", "NemotronH_Nano_VL_V2",
                  "MiniMaxM3SparseForConditionalGeneration", "KimiK3ForConditionalGeneration",
                  "KimiLinearForCausalLM"}


def test_vllm_0_33_capture_chain_breaks(findings):
    chain = {(Path(f.path).name, f.class_name): f.code for f in findings if f.code in ("EGL050", "EGL051", "EGL052")}
    assert chain == CHAIN_BREAKS
    mimo = next(f for f in findings if f.class_name == "MiMoForCausalLM")
    # the writer named is the mixin's setter, reached through the protocol's default
    write = Path(mimo.wrapped_path).read_text().splitlines()[mimo.wrapped_line - 1]
    assert (Path(mimo.wrapped_path).name, mimo.provider_class) == ("interfaces.py", "SupportsEagle3")
    assert write.strip().startswith("self.aux_hidden_state_layers = ")
    forward = class_node(vllm_root() / MODELS / "mimo.py", "MiMoModel")
    assert "aux_hidden_state" not in ast.unparse(function_node(forward, "forward"))
    assert base_names(forward) == ["Qwen2Model"]


def test_vllm_0_33_chains_followed_to_a_collecting_decoder():
    from eaglelint.analysis.python.resolve import ClassEntity, Resolver
    from eaglelint.analysis.sglang.owners import OwnerAnalysis
    from eaglelint.analysis.vllm.marker import marker_in_mro
    from eaglelint.analysis.vllm.vllm_chain import VllmChainAnalysis
    from eaglelint.analysis.vllm.vllm_registry import registry_for, served

    project = Project()
    resolver = Resolver(project)
    chains = VllmChainAnalysis(resolver, OwnerAnalysis(resolver))
    targets, holding, followed, unknown, broken = [], {}, 0, set(), set()
    registered = None
    for path in discover(vllm_model_dirs()).files:
        if b"vllm_config" not in path.read_bytes():  # files that build models, as the vllm pack reads
            continue
        mod = project.summary(path)
        for name in mod.classes if mod else ():
            cls = ClassEntity(mod.path, name)
            if registered is None:
                registered = served(resolver, registry_for(project, mod.path))
            if cls in registered and marker_in_mro(resolver, cls, "SupportsEagle3") not in (None, cls):
                targets.append(cls)
                chain = chains.chain(cls)
                if chain.holds is None:
                    unknown.add(name)
                if chain.holds is False:
                    broken.add((path.name, name))
                if chain.holds:
                    followed += 1
                    holding[(path.name, name)] = chain.decoder.qualname
                    assert chains.decoder(chain.decoder).collects, name
    assert len(set(targets)) == len(targets) >= 80 and followed >= 69
    assert unknown == CHAINS_UNKNOWN and broken == set(CHAIN_BREAKS)
    assert {k: holding.get(k) for k in CHAINS_HOLD} == CHAINS_HOLD
