"""The fixed Kimi-K2.5 class inside real SGLang, on CPU: built, its EAGLE-3 methods called, a forward run.

Each release gets one probe run (a subprocess in the tier's own venv, see
runtime_support.py) on a copy of its installed package that `eaglelint fix
--write` has edited; the tests below assert on that run's report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from runtime_support import (
    EAGLE3,
    KIMI,
    assert_sglang_set_up_capture,
    copy_package,
    installed_package,
    run_fix,
    run_imports,
    run_probe,
    venv_python,
    write_checkpoints,
)

pytestmark = [pytest.mark.runtime, pytest.mark.slow]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> tuple[Path, Path]:
    return write_checkpoints(tmp_path_factory.mktemp("checkpoints"))


def fixed_release(version: str, tmp: Path) -> dict:
    """The release's venv python, its installed package, and a copy of it after `eaglelint fix --write`."""
    python = venv_python(version)
    released = installed_package(python)
    tree = copy_package(released, tmp / "tree")
    done = run_fix(tree / "sglang" / "srt" / "models", sys.executable)
    assert done.returncode in (0, 1), done.stderr
    changed = sorted(str(p.relative_to(tree / "sglang")) for p in (tree / "sglang").rglob("*.py")
                     if p.read_bytes() != (released / p.relative_to(tree / "sglang")).read_bytes())
    return {"python": python, "released": released, "tree": tree, "changed": changed}


@pytest.fixture(scope="module")
def fixed_0_5_9(tmp_path_factory) -> dict:
    return fixed_release("0.5.9", tmp_path_factory.mktemp("sglang-0.5.9"))


@pytest.fixture(scope="module")
def fixed_0_5_23(tmp_path_factory) -> dict:
    return fixed_release("0.5.23", tmp_path_factory.mktemp("sglang-0.5.23"))


@pytest.fixture(scope="module")
def report_0_5_9(fixed_0_5_9, checkpoints) -> dict:
    fixed = fixed_0_5_9
    assert KIMI[0] in fixed["changed"]
    released_kimi = fixed["released"] / KIMI[0]
    report = run_probe(fixed["python"], fixed["tree"], checkpoints, released_kimi,
                       fixed["tree"].parent / "report.json", forward=True)
    assert report["sglang"] == "0.5.9"
    assert report["fixed_class_file"] == str(fixed["tree"] / "sglang" / KIMI[0])
    assert report["unfixed_class_file"] == str(released_kimi)
    return report


@pytest.fixture(scope="module")
def report_0_5_23(fixed_0_5_23, checkpoints) -> dict:
    fixed = fixed_0_5_23
    assert KIMI[0] not in fixed["changed"]  # upstream delegates already: the fix leaves it alone
    report = run_probe(fixed["python"], fixed["tree"], checkpoints, fixed["released"] / KIMI[0],
                       fixed["tree"].parent / "report.json", forward=True)
    assert report["sglang"] == "0.5.23"
    assert report["fixed_class_file"] == str(fixed["tree"] / "sglang" / KIMI[0])
    return report


def test_0_5_9_runs_on_cpu_from_the_fixed_copy(report_0_5_9):
    assert report_0_5_9["cuda"] is False
    assert report_0_5_9["torch"].endswith("+cpu")
    assert report_0_5_9["fixed_class"] == "sglang.srt.models.kimi_k25." + KIMI[1]


def test_0_5_9_unfixed_class_raises_attribute_error_for_each_method(report_0_5_9):
    assert set(report_0_5_9["unfixed_methods"]) == set(EAGLE3)
    for name, error in report_0_5_9["unfixed_methods"].items():
        assert error is not None and error.startswith("AttributeError") and name in error


def test_0_5_9_fixed_class_has_every_method(report_0_5_9):
    assert report_0_5_9["fixed_methods"] == dict.fromkeys(EAGLE3)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_set_eagle3_layers_to_capture_turns_capture_on_in_the_language_model(release, request):
    eagle3 = request.getfixturevalue("report_" + release.replace(".", "_"))["eagle3"]
    assert eagle3["before"] == {"capture_aux_hidden_states": False, "layers_to_capture": []}
    # DeepSeek's own set_eagle3_layers_to_capture adds 1 to each id (the aux state of layer i is
    # the input of layer i + 1); 0.5.23 adds it when the first id is 1, as here.
    assert eagle3["after_set_layers"] == {"capture_aux_hidden_states": True, "layers_to_capture": [2]}


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_get_embed_and_head_returns_the_wrapped_models_own_tensors(release, request):
    got = request.getfixturevalue("report_" + release.replace(".", "_"))["eagle3"]["get_embed_and_head"]
    assert got == {"embed_is_wrapped": True, "head_is_wrapped": True, "embed_shape": [256, 64],
                   "head_shape": [256, 64]}


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_set_embed_and_head_replaces_them_in_the_wrapped_model(release, request):
    got = request.getfixturevalue("report_" + release.replace(".", "_"))["eagle3"]["set_embed_and_head"]
    assert got == {"embed_replaced": True, "head_replaced": True, "get_returns_new": True}


def test_0_5_23_release_class_has_every_method_built_in(report_0_5_23):
    assert report_0_5_23["unfixed_methods"] == dict.fromkeys(EAGLE3)
    assert report_0_5_23["fixed_methods"] == dict.fromkeys(EAGLE3)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_tiny_checkpoints_fill_every_parameter_through_sglangs_loader(release, request):
    report = request.getfixturevalue("report_" + release.replace(".", "_"))
    assert report["unloaded_params"]["target"] == []
    # an EAGLE-3 draft takes its embedding from the target (set_embed / set_embed_and_head)
    assert report["unloaded_params"]["draft"] == ["model.embed_tokens.weight"]
    assert report["draft_class"] == "LlamaForCausalLMEagle3"


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_forward_on_cpu_yields_the_aux_hidden_state_of_the_chosen_layer(release, request):
    forward = request.getfixturevalue("report_" + release.replace(".", "_"))["forward"]
    assert forward["capture_layer"] == 2 and forward["num_layers"] == 3
    assert len(forward["steps"]) == 3
    for step in forward["steps"]:
        assert step["mode"] == "DECODE" and step["capture_hidden_mode"] == "FULL"
        assert step["aux_shape"] == [1, 64]
        # the residual stream entering each layer, read by a hook on its input norm: the aux state
        # is exactly the one entering layer 2, and differs from the one entering layer 1
        diffs = step["aux_diff_to_stream_into_layer"]
        assert set(diffs) == {"1", "2"}
        assert diffs["2"] == 0.0 and diffs["1"] > 0.0
        assert step["logits_shape"] == [1, 256] and step["logits_finite"] is True


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_whole_tree_fix_leaves_every_model_module_importing_as_before(release, request, tmp_path):
    fixed = request.getfixturevalue("fixed_" + release.replace(".", "_"))
    before = run_imports(fixed["python"], None, tmp_path / "before.json")
    after = run_imports(fixed["python"], fixed["tree"], tmp_path / "after.json")
    assert before["models_dir"].startswith(str(fixed["released"]))
    assert after["models_dir"].startswith(str(fixed["tree"]))
    assert after["outcomes"] == before["outcomes"]
    changed = {"sglang." + p.removesuffix(".py").replace("/", ".") for p in fixed["changed"]}
    imported = {m for m in changed if before["outcomes"].get(m) == "ok"}
    assert len(imported) >= 5, (sorted(changed), before["outcomes"])


@pytest.fixture(scope="module")
def gpu_checkpoints(tmp_path_factory) -> tuple[Path, Path]:
    """The GPU run's files: 5 layers, so that aux ids 1, 2, 3 name layers the target has."""
    return write_checkpoints(tmp_path_factory.mktemp("gpu-checkpoints"), layers=5)


@pytest.mark.parametrize(("release", "caller"), [
    ("0.5.9", "srt/model_executor/model_runner.py:initialize"),
    ("0.5.23", "srt/model_executor/model_runner_components/attention_backend_setup.py:"
               "configure_aux_hidden_state_capture"),
])
def test_an_eagle3_engines_start_up_calls_set_eagle3_layers_to_capture_itself(release, caller, request,
                                                                             gpu_checkpoints, tmp_path):
    fixed = request.getfixturevalue("fixed_" + release.replace(".", "_"))
    report = run_probe(fixed["python"], fixed["tree"], gpu_checkpoints, fixed["released"] / KIMI[0],
                       tmp_path / "report.json", eagle3=True)
    # 0.5.9 adds 1 to every id; 0.5.23 when the first id is 1: layers 2, 3, 4 either way
    assert_sglang_set_up_capture(report, [1, 2, 3], [2, 3, 4])
    assert [c["caller"] for c in report["sglang_setup"]["calls"] if c["method"] == EAGLE3[0]] == [caller]
