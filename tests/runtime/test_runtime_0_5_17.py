"""SGLang 0.5.17, the release the GPU run uses, on CPU: the GPU run's own files, started as an EAGLE-3 engine.

The GPU script's CPU half (--prepare-only, in the 0.5.17 venv) writes the
5-layer target, the EAGLE-3 draft and the unfixed, fixed and broken trees; the
probe then starts each tree the way 0.5.17's scheduler does, with EAGLE-3
server args, so SGLang's own start-up (configure_aux_hidden_state_capture in
the TP worker's attention-backend set-up) calls set_eagle3_layers_to_capture.
What a GPU adds beyond this is the CUDA kernels and the engine's processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from runtime_support import (
    EAGLE3,
    KIMI,
    RUNTIME_SCRIPTS,
    assert_sglang_set_up_capture,
    gpu_verdict,
    run_probe,
    venv_python,
)

pytestmark = [pytest.mark.runtime, pytest.mark.slow]
SETUP_CALLER = ("srt/model_executor/model_runner_components/attention_backend_setup.py:"
                "configure_aux_hidden_state_capture")
CAPTURED = [i + 1 for i in gpu_verdict.AUX_LAYER_IDS]  # DeepSeek captures the input of layer id + 1


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("gpu-0.5.17") / "work"
    done = subprocess.run([str(venv_python("0.5.17")), str(RUNTIME_SCRIPTS / "gpu_eagle3_kimi_k25.py"), str(work),
                           "--prepare-only", "--eaglelint-python", sys.executable], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((work / "verdict.json").read_text())


def probe(prepared: dict, tree: str) -> dict:
    checkpoints = (Path(prepared["target"]), Path(prepared["draft"]))
    unfixed = Path(prepared["unfixed_tree"]) / "sglang" / KIMI[0]
    out = Path(prepared[f"{tree}_tree"]).parent / f"report-{tree}.json"
    return run_probe(venv_python("0.5.17"), Path(prepared[f"{tree}_tree"]), checkpoints, unfixed, out,
                     forward=True, eagle3=True, draft_worker=True)


def calls(report: dict, method: str) -> list[dict]:
    return [c for c in report["sglang_setup"]["calls"] if c["method"] == method]


@pytest.fixture(scope="module")
def fixed(prepared) -> dict:
    return probe(prepared, "fixed")


@pytest.fixture(scope="module")
def broken(prepared) -> dict:
    return probe(prepared, "broken")


def test_the_gpu_script_strips_0_5_17_and_fixes_it(prepared):
    assert prepared["stripped"] == sorted(EAGLE3) and prepared["fix_exit"] == 0


def test_0_5_17_builds_the_gpu_runs_checkpoints_through_its_own_loader_on_cpu(fixed):
    assert fixed["sglang"] == "0.5.17" and fixed["cuda"] is False
    assert fixed["unloaded_params"] == {"target": [], "draft": ["model.embed_tokens.weight"]}
    assert fixed["draft_class"] == "LlamaForCausalLMEagle3"
    assert all(e and e.startswith("AttributeError") for e in fixed["unfixed_methods"].values())
    # the GPU verdict's pattern reads 0.5.17's own message for each missing method
    assert {name: gpu_verdict.MISSING.findall(e) for name, e in fixed["unfixed_methods"].items()} == {
        name: [name] for name in EAGLE3}
    assert fixed["fixed_methods"] == dict.fromkeys(EAGLE3)


def test_0_5_17_start_up_calls_set_eagle3_layers_to_capture_and_capture_turns_on(fixed):
    assert_sglang_set_up_capture(fixed, gpu_verdict.AUX_LAYER_IDS, CAPTURED)
    assert [c["caller"] for c in calls(fixed, EAGLE3[0])] == [SETUP_CALLER]


def test_0_5_17_eagle_worker_takes_the_drafts_embedding_from_the_target_through_its_own_init_lm_head(fixed):
    draft = fixed["sglang_setup"]["draft_worker"]
    assert draft["class"] == "EAGLEWorkerV2"
    init_lm_head = "srt/speculative/eagle_worker_v2.py:init_lm_head"
    assert [c["caller"] for c in calls(fixed, "get_embed_and_head")] == [init_lm_head]
    assert [c["caller"] for c in calls(fixed, "set_embed")] == [init_lm_head]
    # the draft now reads the target's own embedding tensor; an EAGLE-3 draft keeps its lm_head
    assert draft["embed_is_targets"] is True and draft["head_is_targets"] is False
    # what stops the draft worker on CPU (docs/runtime.md): its MHA KV pool warms up with sgl_kernel's CPU kernel
    assert "copy_all_layer_kv_cache_cpu" in draft["pool_error"]


def test_a_no_op_set_eagle3_layers_to_capture_fails_with_an_assertion_that_says_so(broken):
    assert [c["caller"] for c in calls(broken, EAGLE3[0])] == [SETUP_CALLER]
    with pytest.raises(AssertionError, match=r"does not capture layers \[2, 3, 4\].*does nothing"):
        assert_sglang_set_up_capture(broken, gpu_verdict.AUX_LAYER_IDS, CAPTURED)
    assert "forward" not in broken  # nothing to compare: the probe says so instead of failing on an empty list


def test_0_5_17_forward_on_cpu_yields_the_aux_hidden_state_of_the_chosen_layer(fixed):
    forward = fixed["forward"]
    assert forward["capture_layer"] == 2 and forward["num_layers"] == 5
    for step in forward["steps"]:
        assert step["aux_shape"] == [1, 64]
        diffs = step["aux_diff_to_stream_into_layer"]
        assert diffs["2"] == 0.0 and diffs["1"] > 0.0
        assert step["logits_finite"] is True
