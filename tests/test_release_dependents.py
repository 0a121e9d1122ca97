"""The case that motivates dependents, on the real releases: in SGLang 0.5.4.post2
DeepseekV2ForCausalLM gained set_eagle3_layers_to_capture, which opened gaps in
deepseek_vl2.py, dots_vlm.py and kimi_vl.py (and deepseek_ocr.py); none of those files changed
between 0.5.4.post1 and 0.5.4.post2 (checked by the last test)."""

from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.pipeline.lint import lint

pytestmark = pytest.mark.release
# deepseek_ocr.py too: byte-identical in both, it holds DeepseekV3ForCausalLM / DeepseekV2ForCausalLM
# as self.model (lines 1182-1194 of 0.5.4.post2) and defines none of the members, so
# the new set_eagle3_layers_to_capture (deepseek_v2.py:3779) opened the same gap there
BROKEN = {"deepseek_vl2.py", "dots_vlm.py", "kimi_vl.py", "deepseek_ocr.py"}


def eagle3_gaps(version):
    findings = lint([models_dir(version) / "deepseek_v2.py"]).findings  # only the changed file, as pre-commit
    return [f for f in findings if f.method == "set_eagle3_layers_to_capture"]


def test_0_5_4_post2_changed_deepseek_v2_reports_the_unchanged_wrappers_it_broke():
    gaps = eagle3_gaps("0.5.4.post2")
    assert {Path(f.path).name for f in gaps} == BROKEN
    for f in gaps:
        assert f.code == "EGL001" and f.provider_class == "DeepseekV2ForCausalLM"
        assert "deepseek_v2.py" in f.included_because and "DeepseekV2ForCausalLM" in f.included_because


def test_0_5_4_post1_deepseek_v2_had_no_such_method_so_no_such_gap():
    assert eagle3_gaps("0.5.4.post1") == []


def test_0_5_4_registry_chosen_wrapper_is_not_rechecked_for_one_candidate():
    # llava.py: self.language_model = ModelRegistry.resolve_model_cls(arch)[0](...), arch from the
    # checkpoint: any registered text model, deepseek_v2.py's among them. Its gap (no setter in
    # LlavaBaseForCausalLM or LlavaForConditionalGeneration) rests on none of them alone: a check
    # of deepseek_v2.py does not bring it in, a check of the tree reports it.
    assert not [f for f in lint([models_dir("0.5.4.post2") / "deepseek_v2.py"]).findings
                if Path(f.path).name == "llava.py"]
    tree = lint([models_dir("0.5.4.post2")]).findings
    assert [f.code for f in tree if f.class_name == "LlavaForConditionalGeneration"
            and f.method == "set_eagle3_layers_to_capture"] == ["EGL001"]


def test_0_5_4_the_broken_wrappers_are_byte_identical_across_post1_and_post2():
    for name in BROKEN:
        assert (models_dir("0.5.4.post1") / name).read_bytes() == (models_dir("0.5.4.post2") / name).read_bytes()


@pytest.mark.parametrize("changed", ["deepseek_v2.py", "llama.py", "qwen2.py", "qwen3.py", "qwen2_vl.py", "utils.py"])
def test_0_5_9_import_line_prefilter_misses_no_dependent(changed):
    """The cheap prefilter (import lines only) finds exactly what resolving every wrapper finds."""
    from eaglelint.analysis.python.project import Project
    from eaglelint.analysis.sglang.dependents import find_dependents

    path = models_dir("0.5.9") / changed
    fast = find_dependents([path], {path}, ("language_model",), Project())
    full = find_dependents([path], {path}, ("language_model",), Project(), prefilter=False)
    assert {(d.path, d.class_name) for d in fast} == {(d.path, d.class_name) for d in full}
    if changed in ("deepseek_v2.py", "llama.py", "qwen2.py", "qwen3.py"):
        assert fast  # each is wrapped by some wrapper


def test_0_5_23_changed_qwen2_reaches_the_wrappers_that_hold_it_as_llm():
    """Discovery by what is held (no attribute given): nvila.py, nvila_lite.py and
    points_v15_chat.py assign `self.llm = Qwen2ForCausalLM(...)` (read by hand) and import
    it from qwen2.py; the prefilter misses none that resolving every class finds."""
    from eaglelint.analysis.python.project import Project
    from eaglelint.analysis.sglang.dependents import find_dependents

    path = models_dir("0.5.23") / "qwen2.py"
    fast = {(Path(d.path).name, d.class_name) for d in find_dependents([path], {path}, (), Project())}
    full = {(Path(d.path).name, d.class_name) for d in find_dependents([path], {path}, (), Project(), prefilter=False)}
    assert fast == full
    assert {("nvila.py", "NVILAForConditionalGeneration"), ("nvila_lite.py", "NVILALiteForConditionalGeneration"),
            ("points_v15_chat.py", "POINTSV15ChatModel")} <= fast
