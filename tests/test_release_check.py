"""`eaglelint check` on real SGLang releases, fetched from the package registry and cached."""

import ast
from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import Resolver
from eaglelint.analysis.sglang.served import served
from eaglelint.checks.delegation import OPTIONAL_CODE, SEVERITY_BY_CALLED_ON
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release
EAGLE3 = {"set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}
DELEGATION = {*SEVERITY_BY_CALLED_ON.values(), OPTIONAL_CODE}  # EGL001-EGL003
AUX = {"EGL020", "EGL021", "EGL022", "EGL023"}  # the aux-hidden-state path


def check(paths):
    return check_files(discover(paths).files, CheckOptions(tuple(select_interfaces(None)))).findings


def test_0_5_9_kimi_k25_lacks_all_three_methods_found_in_deepseek_v2():
    findings = check([models_dir("0.5.9") / "kimi_k25.py"])  # only this file given, as pre-commit does
    assert {f.method for f in findings} == EAGLE3
    for f in findings:
        assert f.class_name == "KimiK25ForConditionalGeneration"
        assert f.wrapped_class == "DeepseekV3ForCausalLM"
        assert f.provider_class == "DeepseekV2ForCausalLM"
        assert Path(f.wrapped_path).name == "deepseek_v2.py"
        source = Path(f.wrapped_path).read_text().splitlines()
        assert source[f.wrapped_line - 1].strip().startswith(f"def {f.method}(")
        assert f.entry_class


def test_0_5_9_whole_tree_reports_kimi_k25_with_three_methods():
    findings = check([models_dir("0.5.9")])
    kimi = {f.method for f in findings if Path(f.path).name == "kimi_k25.py"}
    assert kimi == EAGLE3
    assert not [f for f in findings if f.code == "EGL999"]


def test_0_5_10_kimi_k25_is_clean():
    assert check([models_dir("0.5.10") / "kimi_k25.py"]) == []
    assert not [f for f in check([models_dir("0.5.10")]) if Path(f.path).name == "kimi_k25.py"]


def test_0_5_23_whole_tree_completes_and_names_yivl_subclass():
    root = models_dir("0.5.23")
    findings = check([root])
    assert len(list(root.rglob("*.py"))) > 250
    assert not [f for f in findings if f.code == "EGL999"]
    assert not [f for f in findings if Path(f.path).name == "kimi_k25.py"]
    llava = [f for f in findings if f.class_name == "LlavaLlamaForCausalLM"]
    assert llava and all(any("YiVLForCausalLM" in s for s in f.subclasses) for f in llava)
    assert not [f for f in findings if f.class_name == "YiVLForCausalLM"]


def test_0_5_23_component_thinker_and_registry_wrapper_subclass():
    findings = check([models_dir("0.5.23")])
    # built as `self.thinker` of the registered DotsNoteOmni model, never the top-level model
    assert not [f for f in findings if f.class_name == "DotsNoteOmniThinkerForConditionalGeneration"]
    # llava.py 0.5.23: LlavaBaseForCausalLM defines get_embed_and_head (461) and set_embed_and_head
    # (467), no set_eagle3_layers_to_capture; the language model is a registered text model the
    # checkpoint names, and Mistral3ForConditionalGeneration (mistral.py:94) subclasses it
    llava = [f for f in findings if f.class_name == "LlavaForConditionalGeneration"]
    assert [(f.code, f.method) for f in llava] == [("EGL001", "set_eagle3_layers_to_capture")]
    assert any(s.startswith("Mistral3ForConditionalGeneration") for s in llava[0].subclasses)


# Wrappers found by what they hold, read by hand in 0.5.23: the held
# class and where its members are defined. Each wrapper defines none of them itself
# (grep "def get_embed_and_head|def set_eagle3|def set_embed_and_head" in its file),
# except dots_ocr.py, which defines get_embed_and_head (line 167); none has __getattr__.
HELD_0_5_23 = {
    # MiniCPMO.init_llm returns Qwen2ForCausalLM (qwen2.py: get_embed_and_head 767,
    # set_embed_and_head 770, set_eagle3_layers_to_capture 781)
    ("minicpmo.py", "MiniCPMO", "llm"): EAGLE3,
    ("nvila.py", "NVILAForConditionalGeneration", "llm"): EAGLE3,  # self.llm = Qwen2ForCausalLM(...)
    ("nvila_lite.py", "NVILALiteForConditionalGeneration", "llm"): EAGLE3,  # the same
    ("points_v15_chat.py", "POINTSV15ChatModel", "llm"): EAGLE3,  # the same
    ("sarashina2_vision.py", "Sarashina2VisionForCausalLM", "llm"): EAGLE3,  # LlamaForCausalLM (llama.py)
    # BailingMoeV2ForCausalLM(BailingMoEForCausalLM), bailing_moe.py 904, 908, 1098
    ("bailing_mm.py", "BailingMMNativeForConditionalGeneration", "model"): EAGLE3,
    # DeepseekV3ForCausalLM / DeepseekV2ForCausalLM (deepseek_v2.py 3439, 3442, 3458) or DeepseekForCausalLM
    ("deepseek_ocr.py", "DeepseekOCRForCausalLM", "model"): EAGLE3,
    ("dots_ocr.py", "DotsOCRForCausalLM", "model"): EAGLE3 - {"get_embed_and_head"},  # Qwen2ForCausalLM
    # BailingMoeV3ForCausalLM has get_embed_and_head and set_embed_and_head (bailing_moe_v3.py 2048, 2051)
    ("bailing_mm_v3.py", "BailingMoeV3VLForConditionalGeneration", "model"): EAGLE3 - {"set_eagle3_layers_to_capture"},
    # self.thinker = Qwen3OmniMoeThinkerForConditionalGeneration, a Qwen3VLForConditionalGeneration
    # (qwen3_vl.py: get_embed_and_head 1774, set_eagle3_layers_to_capture 1777; no set_embed_and_head)
    ("qwen3_omni_moe.py", "Qwen3OmniMoeForConditionalGeneration", "thinker"): EAGLE3 - {"set_embed_and_head"},
    # minicpmv.py: MiniCPMBaseModel's `self.llm = self.init_llm(...)` raises NotImplementedError;
    # MiniCPMV (the EntryClass) forwards every attribute to the per-version model through
    # __getattr__ (line 1770), and no class of the file defines an EAGLE-3 member.
    ("minicpmv.py", "MiniCPMV2_6", "llm"): EAGLE3,  # init_llm: Qwen2ForCausalLM (line 902)
    ("minicpmv.py", "MiniCPMV4_0", "llm"): EAGLE3,  # init_llm: LlamaForCausalLM (line 1069)
    ("minicpmv.py", "MiniCPMV4_5", "llm"): EAGLE3,  # init_llm: Qwen3ForCausalLM (line 1236)
    # init_llm: Qwen3_5MoeForCausalLM or Qwen3_5ForCausalLM (by the config's type); qwen3_5.py's
    # Qwen3_5ForCausalLM defines set_eagle3_layers_to_capture (1894) and neither embed member;
    # MiniCPMV4_7 keeps 4_6's init_llm and is named in its finding
    ("minicpmv.py", "MiniCPMV4_6", "llm"): {"set_eagle3_layers_to_capture"},
}


def _delegation_gaps(findings):
    gaps: dict[tuple[str, str, str], set[str]] = {}
    for f in findings:
        if f.code in DELEGATION:
            gaps.setdefault((Path(f.path).name, f.class_name, f.wrapper_attribute), set()).add(f.method)
    return gaps


def test_0_5_23_wrappers_found_by_what_they_hold_with_no_flag():
    gaps = _delegation_gaps(check([models_dir("0.5.23")]))
    for key, members in HELD_0_5_23.items():
        assert gaps.get(key) == members, key
    # every delegation gap outside language_model is one of these (read by hand)
    assert {k for k in gaps if k[2] != "language_model"} == set(HELD_0_5_23)


def test_0_5_23_drafts_and_owners_are_not_wrappers():
    findings = check([models_dir("0.5.23")])
    # MTP drafts holding Qwen3_5ForCausalLM / Qwen4ExpModel: never asked for the EAGLE-3 setter
    assert not [f for f in findings if Path(f.path).name in ("qwen3_5_mtp.py", "qwen4_exp_mtp.py")]
    # ordinary *ForCausalLM whose decoder (Qwen2MoeModel, Qwen3NextModel) defines the setter itself
    owners = {"Qwen2MoeForCausalLM", "Qwen3NextForCausalLM"}
    assert not [f for f in findings if f.class_name in owners and (f.code in DELEGATION or f.code in AUX)]


def test_0_5_23_restricted_to_language_model_finds_none_of_them():
    options = CheckOptions(tuple(select_interfaces(None)), ("language_model",))
    findings = check_files(discover([models_dir("0.5.23")]).files, options).findings
    assert not set(_delegation_gaps(findings)) & set(HELD_0_5_23)
    assert {f.wrapper_attribute for f in findings if f.code in DELEGATION} == {"language_model"}


def test_0_5_23_draft_architectures_are_the_rewrites_not_the_targets_compared():
    """configs/model_config.py, _config_draft_model: `if is_draft_model and
    self.hf_config.architectures[0] == "MiMoForCausalLM": ... = "MiMoMTP"` (lines 1092-1093),
    `self.hf_config.architectures = ["Step3p5MTP"]` (1120); the target compared is no draft."""
    from fetch_sglang import release_root

    from eaglelint.analysis.sglang.roles import draft_architectures

    found = draft_architectures(release_root("0.5.23") / "sglang" / "srt" / "configs" / "model_config.py")
    assert {"MiMoMTP", "Step3p5MTP", "BailingMoeForCausalLMNextN", "Qwen3_5ForCausalLMMTP"} <= found
    assert not found & {"MiMoForCausalLM", "Step3p7ForConditionalGeneration", "BailingMoeV2ForCausalLM"}


def test_0_5_23_served_set_is_every_top_level_entry_class_and_follows_re_exports():
    # models/registry.py import_model_classes: pkgutil.iter_modules over the models package,
    # subpackages skipped, each module's EntryClass (225 of 255 modules have one, all lists or
    # one name), keyed by __name__. Read here with ast, apart from eaglelint.
    root = models_dir("0.5.23")
    listed: dict[str, str] = {}
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_bytes())
        defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        imported = {a.asname or a.name: n.module for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in node.targets):
                for e in node.value.elts if isinstance(node.value, ast.List) else [node.value]:
                    listed[e.id] = path.name if e.id in defined else imported[e.id]
    registry = served(Resolver(Project()), str(root / "llava.py"))
    assert len(listed) == 290 and set(registry.by_name) == set(listed)
    for name, cls in registry.by_name.items():
        tree = ast.parse(Path(cls.path).read_bytes())
        assert name in {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    # dots3.py and dots3_nextn.py re-export classes defined in the dots3_common subpackage
    assert listed["Dots3NoteForCausalLM"] == "sglang.srt.models.dots3_common.modeling"
    where = {name: Path(registry.by_name[name].path).relative_to(root).as_posix()
             for name in ("Dots3NoteForCausalLM", "Dots3NoteForCausalLMNextN")}
    assert where == {"Dots3NoteForCausalLM": "dots3_common/modeling.py",
                     "Dots3NoteForCausalLMNextN": "dots3_common/nextn.py"}
