"""The case that motivates dependents, on the real releases: in SGLang 0.5.4.post2
DeepseekV2ForCausalLM gained set_eagle3_layers_to_capture, which opened gaps in
deepseek_vl2.py, dots_vlm.py and kimi_vl.py; none of those three files changed
between 0.5.4.post1 and 0.5.4.post2 (checked by the last test)."""

from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.lint import lint

pytestmark = pytest.mark.release
BROKEN = {"deepseek_vl2.py", "dots_vlm.py", "kimi_vl.py"}


def eagle3_gaps(version):
    findings = lint([models_dir(version) / "deepseek_v2.py"]).findings  # only the changed file, as pre-commit
    return [f for f in findings if f.method == "set_eagle3_layers_to_capture"]


def test_0_5_4_post2_changed_deepseek_v2_reports_the_three_unchanged_wrappers_it_broke():
    gaps = eagle3_gaps("0.5.4.post2")
    assert {Path(f.path).name for f in gaps} == BROKEN
    for f in gaps:
        assert f.code == "EGL001" and f.provider_class == "DeepseekV2ForCausalLM"
        assert "deepseek_v2.py" in f.included_because and "DeepseekV2ForCausalLM" in f.included_because


def test_0_5_4_post1_deepseek_v2_had_no_such_method_so_no_such_gap():
    assert eagle3_gaps("0.5.4.post1") == []


def test_0_5_4_the_three_wrappers_are_byte_identical_across_post1_and_post2():
    for name in BROKEN:
        assert (models_dir("0.5.4.post1") / name).read_bytes() == (models_dir("0.5.4.post2") / name).read_bytes()


@pytest.mark.parametrize("changed", ["deepseek_v2.py", "llama.py", "qwen2.py", "qwen3.py", "qwen2_vl.py", "utils.py"])
def test_0_5_9_import_line_prefilter_misses_no_dependent(changed):
    """The cheap prefilter (import lines only) finds exactly what resolving every wrapper finds."""
    from eaglelint.analysis.dependents import find_dependents
    from eaglelint.analysis.project import Project

    path = models_dir("0.5.9") / changed
    fast = find_dependents([path], {path}, ("language_model",), Project())
    full = find_dependents([path], {path}, ("language_model",), Project(), prefilter=False)
    assert {(d.path, d.class_name) for d in fast} == {(d.path, d.class_name) for d in full}
    if changed in ("deepseek_v2.py", "llama.py", "qwen2.py", "qwen3.py"):
        assert fast  # each is wrapped by some wrapper
