"""Owner classes of SGLang 0.5.9 that lack EAGLE-3 members, run on CPU once `eaglelint fix --write` wrote them.

The 0.5.23 tier (test_runtime_capture_families.py) for the release with the gap: a copy of
the installed 0.5.9 package gets the members, one family file at a time, and
tests/runtime/probe_capture.py starts the served class on a tiny random-weight
checkpoint. 0.5.9 has no switch for aux capture without a draft, so the engine is
an EAGLE-3 engine (server arguments as the Kimi-K2.5 0.5.9 probe's) whose draft
config names the ids, or names none; SGLang's own ModelRunner.initialize then calls
set_eagle3_layers_to_capture. Decode steps compare the aux hidden states handed to
the logits processor with the output of every layer. The release itself, started
the same way, dies at that call where the member is missing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest
from runtime_support import RUNTIME_SCRIPTS, copy_package, installed_package, run_child, run_fix, venv_python
from test_runtime_capture_families import (
    FIXER,
    GET_EMBED_AND_HEAD,
    MODELS_OWN_TENSORS,
    PROBE,
    SET_LAYERS,
    Family,
    assert_decode_steps,
    assert_members_as_released,
    changed_files,
    started,
)

pytestmark = [pytest.mark.runtime, pytest.mark.slow]

RELEASE = "0.5.9"
ENGINE_CALLER = "srt/model_executor/model_runner.py:initialize"  # 0.5.9 calls the member inline there
# 0.5.9's MHA KV pool, built for a speculative engine, warms up a Triton KV-copy kernel (standins.skip_kv_copy_warmup)
KV_COPY_WARMUP = "sglang.srt.mem_cache.memory_pool.MHATokenToKVPool._init_kv_copy_and_warmup"


@dataclass(frozen=True)
class Family059(Family):
    # 0.5.9's loader skips these published names (Qwen3-VL's vision tower: its load_weights maps `model.visual.`
    # names to nothing); the decode steps are text only and never call it
    unloaded_prefix: str | None = None


# 4 layers each; ids and None as in the 0.5.23 tier: [0, 2] are the outputs of layers 0 and 2 for a decoder that
# captures on entering a layer (the member adds 1), None the outputs of layers 0 and 1 ([2, 2, 1] as entries)
FAMILIES = {
    # a multimodal class that owns its decoder (Qwen3LLMModel): both members, and the served forward edited (the
    # flag, the decoder's (hidden, aux) unpacked under it and aux handed on); text-only decode steps
    "Qwen3VLForConditionalGeneration": Family059("qwen3_vl", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1),
                                                 FIXER, forward_edited=True, unloaded_prefix="visual."),
}
# Run only where EAGLELINT_RUNTIME_ALL_FAMILIES=1
MORE_FAMILIES = {
    "Glm4ForCausalLM": Family059("glm4", (SET_LAYERS,), (0, 2), (0, 2), (0, 1), FIXER),
    # the release's own set_eagle3_layers_to_capture stays; only get_embed_and_head is written
    "Qwen2MoeForCausalLM": Family059("qwen2_moe", (GET_EMBED_AND_HEAD,), (0, 2), (0, 2), (0, 1), FIXER),
    "ArceeForCausalLM": Family059("arcee", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1), FIXER),
    "MiMoForCausalLM": Family059("mimo", (SET_LAYERS,), (0, 2), (0, 2), (0, 1), FIXER, forward_edited=True),
    "Qwen2VLForConditionalGeneration": Family059("qwen2_vl", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2),
                                                 (0, 1), FIXER, forward_edited=True),
}
if os.environ.get("EAGLELINT_RUNTIME_ALL_FAMILIES") == "1":
    FAMILIES.update(MORE_FAMILIES)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    python = venv_python(RELEASE)
    released = installed_package(python)
    tree = copy_package(released, tmp_path_factory.mktemp("sglang-0.5.9-capture"))
    prepared = {}
    for cls, family in FAMILIES.items():  # the fixer, run on each family's file alone
        fixed = run_fix(tree / "sglang" / family.path, sys.executable)
        assert fixed.returncode in (0, 1), fixed.stderr
        prepared[cls] = "fixer: " + fixed.stdout.strip()[-2000:]
    changed = changed_files(tree, released)
    return {"python": python, "released": released, "tree": tree, "prepared": prepared, "changed": changed,
            "root": tree.parent}


_REPORTS: dict[tuple[str, str], dict] = {}


def probe(release: dict, cls: str, mode: str) -> dict:
    """The probe's report for family `cls`: the fixed copy started with the family's ids ("ids") or a draft that
    names none ("none"), or the release itself started with the ids ("released"); run once."""
    key = (cls, mode)
    if key not in _REPORTS:
        family = FAMILIES[cls]
        root = release["root"] / cls
        ids = "none" if mode == "none" else ",".join(map(str, family.ids))
        draft = root / f"draft-{ids}"
        if not draft.is_dir():
            done = subprocess.run([str(release["python"]), str(RUNTIME_SCRIPTS / "tiny_checkpoints.py"), str(root),
                                   "--family", cls, "--layers", str(family.layers), "--draft-config", ids],
                                  capture_output=True, text=True)
            assert done.returncode == 0, done.stderr[-3000:]
        out = root / f"report-{mode}.json"
        begun = time.monotonic()
        report = run_child(release["python"], PROBE,
                           ["--module", family.module, "--cls", cls, "--target", str(root / "target"),
                            "--layer-ids", ids, "--draft", str(draft), "--skip-kv-copy-warmup",
                            "--unfixed", str(release["released"] / family.path), "--out", str(out)],
                           out, None if mode == "released" else release["tree"])
        report["probe_wall_s"] = round(time.monotonic() - begun, 1)
        print(f"{cls} ({mode}, 0.5.9): probe {report['probe_wall_s']} s")
        _REPORTS[key] = report
    return _REPORTS[key]


def test_prepare_tree_changes_only_the_families_files(release):
    assert release["changed"] == sorted(f.path for f in FAMILIES.values()), release["prepared"]


@pytest.mark.parametrize("cls", FAMILIES)
def test_release_class_lacks_the_members(cls, release):
    family = FAMILIES[cls]
    unfixed = started(probe(release, cls, "ids"), cls)["unfixed"]
    assert unfixed["file"] == str(release["released"] / family.path)
    assert_members_as_released(unfixed, family)
    # a released forward that reads the flag sets it False; one the fixer edits has no flag at all
    assert unfixed["capture"]["capture_aux_hidden_states"] is (None if family.forward_edited else False)


@pytest.mark.parametrize("cls", [c for c, f in FAMILIES.items() if SET_LAYERS in f.missing])
def test_the_release_started_as_an_eagle3_engine_dies_at_the_engines_call(cls, release):
    report = probe(release, cls, "released")
    assert report["start_error"] == f"AttributeError: '{cls}' object has no attribute '{SET_LAYERS}'", report
    sglang_frames = [f for f in report["start_error_where"] if f.startswith("srt/")]
    assert sglang_frames[-1].startswith("srt/model_executor/model_runner.py:") and sglang_frames[-1].endswith(
        " initialize"), report["start_error_where"]


@pytest.mark.parametrize("cls", FAMILIES)
def test_tiny_checkpoint_fills_every_parameter_through_sglangs_loader(cls, release):
    family = FAMILIES[cls]
    unloaded = started(probe(release, cls, "ids"), cls)["unfixed"]["unloaded_params"]
    if family.unloaded_prefix is None:
        assert unloaded == []
    else:  # the text model is loaded whole; what 0.5.9 skips is the vision tower, and all of it is skipped
        assert unloaded and all(p.startswith(family.unloaded_prefix) for p in unloaded), unloaded


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_engine_start_up_calls_set_eagle3_layers_to_capture(cls, mode, release):
    report = started(probe(release, cls, mode), cls)
    assert report["sglang"] == RELEASE
    assert report["class"] == f"sglang.srt.models.{FAMILIES[cls].module}.{cls}"
    assert report["class_file"] == str(release["tree"] / "sglang" / FAMILIES[cls].path)
    calls = [c for c in report["calls"] if c["method"] == SET_LAYERS]
    expected_args = [list(FAMILIES[cls].ids)] if mode == "ids" else ["NoneType"]
    assert calls == [{"method": SET_LAYERS, "args": expected_args, "caller": ENGINE_CALLER}]
    assert report["capture"]["capture_aux_hidden_states"] is True


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_aux_states_handed_to_the_logits_processor_are_the_outputs_of_the_engines_layers(cls, mode, release):
    assert_decode_steps(started(probe(release, cls, mode), cls)["forward"], FAMILIES[cls], mode)


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_only_the_kv_copy_warm_up_is_stood_in(cls, mode, release):
    assert started(probe(release, cls, mode), cls)["stood_in_calls"] == {KV_COPY_WARMUP: 1}  # one KV pool


@pytest.mark.parametrize("cls", FAMILIES)
def test_get_embed_and_head_returns_the_models_own_tensors(cls, release):
    assert started(probe(release, cls, "ids"), cls).get("get_embed_and_head") == MODELS_OWN_TENSORS

