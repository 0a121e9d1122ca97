"""`eaglelint check` on real SGLang releases, fetched from the package registry and cached."""

from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.analysis.discover import discover
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release
EAGLE3 = {"set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}


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
    llava = next(f for f in findings if f.class_name == "LlavaForConditionalGeneration")
    assert llava.code == "EGL010"
    assert any(s.startswith("Mistral3ForConditionalGeneration") for s in llava.subclasses)
