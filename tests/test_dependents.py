"""Given changed files, wrappers in unchanged files that depend on them are checked too.

The fixture tree fixtures/dependents has the shape of SGLang 0.5.4.post2, where
DeepseekV2ForCausalLM gained set_eagle3_layers_to_capture and so opened a gap in
deepseek_vl2.py, dots_vlm.py and kimi_vl.py, none of which changed.
"""

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_cli import run

from eaglelint.analysis.python.discover import tree_of
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.sglang.dependents import find_dependents
from eaglelint.pipeline.lint import lint

MODELS = FIXTURES / "dependents" / "sglang" / "srt" / "models"
EAGLE3 = "set_eagle3_layers_to_capture"


def found(*names, root=MODELS, **kwargs):
    return lint([root / n for n in names], **kwargs).findings


def test_changed_wrapped_class_reports_the_wrappers_it_broke_in_unchanged_files():
    findings = found("deepseek_v2.py")
    gaps = {(Path(f.path).name, f.class_name) for f in findings if f.method == EAGLE3}
    assert gaps == {("deepseek_vl2.py", "DeepseekVL2ForCausalLM"), ("dots_vlm.py", "DotsVLMForCausalLM"),
                    ("kimi_vl.py", "KimiVLForConditionalGeneration"),
                    ("kimi_k25.py", "KimiK25ForConditionalGeneration"),
                    ("relative_vlm.py", "RelativeImportVLM"), ("module_alias_vlm.py", "ModuleAliasVLM"),
                    ("reexport_vlm.py", "ReexportVLM")}
    assert all(f.included_because and "deepseek_v2.py" in f.included_because for f in findings)


def test_unrelated_and_complete_wrappers_are_not_reported():
    names = {Path(f.path).name for f in found("deepseek_v2.py")}
    assert "llava.py" not in names and "phi_vl.py" not in names and "ok_full_delegation.py" not in names


def test_reason_names_the_class_that_lives_in_the_changed_file():
    deps = {d.class_name: d.reason for d in find_dependents([MODELS / "deepseek_v2.py"], {MODELS / "deepseek_v2.py"},
                                                           ("language_model",), Project())}
    assert "DeepseekV2ForCausalLM" in deps["KimiVLForConditionalGeneration"]
    # kimi_k25 wraps DeepseekV3ForCausalLM (deepseek_v3.py), whose base is in the changed file
    assert "DeepseekV3ForCausalLM" in deps["KimiK25ForConditionalGeneration"]
    assert "DeepseekV2ForCausalLM" in deps["KimiK25ForConditionalGeneration"]
    assert "FullyDelegatingVLM" in deps  # depends, but has no gap: checked, nothing reported
    assert "LlavaLlamaForCausalLM" not in deps


def test_changed_base_of_the_wrapper_itself_reports_the_subclassing_wrapper():
    findings = found("vl_base.py")
    assert {(Path(f.path).name, f.method) for f in findings} == {("phi_vl.py", EAGLE3)}
    assert "VisionLanguageBase" in findings[0].included_because


def test_before_the_wrapped_class_gained_the_method_nothing_is_reported(tmp_path):
    tree = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(MODELS, tree)
    before = (MODELS / "deepseek_v2.py").read_text()
    start = before.index("    def set_eagle3_layers_to_capture")
    (tree / "deepseek_v2.py").write_text(before[:start] + "\n\nEntryClass = [DeepseekV2ForCausalLM]\n")
    findings = found("deepseek_v2.py", root=tree)
    assert not any(f.method == EAGLE3 for f in findings)
    assert {Path(f.path).name for f in findings} == {"kimi_k25.py"}  # its other gaps stay gaps


@pytest.mark.parametrize("changed", sorted(p.name for p in MODELS.glob("*.py")))
def test_import_line_prefilter_finds_what_resolving_every_wrapper_finds(changed):
    path = MODELS / changed
    fast = find_dependents([path], {path}, ("language_model",), Project())
    full = find_dependents([path], {path}, ("language_model",), Project(), prefilter=False)
    assert [(d.path, d.class_name, d.reason) for d in fast] == [(d.path, d.class_name, d.reason) for d in full]


def test_only_the_given_file_is_reported_when_it_has_no_dependents():
    findings = found("kimi_k25.py")  # resolves deepseek_v3.py and deepseek_v2.py on disk
    assert {Path(f.path).name for f in findings} == {"kimi_k25.py"}
    assert {f.method for f in findings} == {EAGLE3, "get_embed_and_head", "set_embed_and_head"}
    assert all(f.included_because is None for f in findings)


def test_no_dependents_flag_reports_only_given_files():
    done = run("check", "--no-dependents", "--output-format", "json", MODELS / "deepseek_v2.py")
    assert done.returncode == 0 and json.loads(done.stdout) == []


def test_json_and_text_say_why_a_file_was_included():
    done = run("check", "--output-format", "json", MODELS / "deepseek_v2.py")
    rows = json.loads(done.stdout)
    assert done.returncode == 1 and all("deepseek_v2.py" in r["included_because"] for r in rows)
    text = run("check", MODELS / "deepseek_v2.py").stdout
    assert text.count("note: checked because") == len(rows)


def test_a_folder_given_has_no_included_because():
    assert all(f.included_because is None for f in lint([MODELS]).findings)


def test_tree_is_the_models_folder_holding_the_file(tmp_path):
    nested = tmp_path / "sglang" / "srt" / "models" / "deepseek_common" / "x.py"
    assert tree_of(nested) == tmp_path / "sglang" / "srt" / "models"
    assert tree_of(tmp_path / "elsewhere" / "y.py") is None


def test_outside_a_models_folder_only_the_files_own_folder_is_searched(tmp_path):
    flat = tmp_path / "flat"
    shutil.copytree(MODELS, flat)
    deeper = flat / "sub" / "deeper_vlm.py"
    deeper.parent.mkdir()
    deeper.write_text((MODELS / "relative_vlm.py").read_text().replace("from .deepseek_v2", "from ..deepseek_v2"))
    assert {Path(f.path).name for f in lint([deeper], dependents=False).findings} == {"deeper_vlm.py"}
    names = {Path(f.path).name for f in found("deepseek_v2.py", root=flat)}
    assert "relative_vlm.py" in names and "deeper_vlm.py" not in names
