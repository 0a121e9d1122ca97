"""Owner classes of SGLang 0.5.23 that lack EAGLE-3 members, run on CPU once the members are written.

For each family in FAMILIES, a copy of the 0.5.23 package gets the members
(prepare_tree), and tests/runtime/probe_capture.py starts the served class on
a tiny random-weight checkpoint as an aux-capturing engine: SGLang's own
start-up calls set_eagle3_layers_to_capture (with the family's ids, and in a
second run with None), then decode steps compare the aux hidden states handed
to the logits processor with the output of every layer. The class as released
is built beside it: it lacks the members, and the engine's own set-up refuses it.
A hybrid family's sequence mixers whose kernels do not run on CPU are replaced by
standins.stand_in_mixer where the family names them (docs/runtime.md): the comparison
is made within one run, so it still tells the engine's layers from their neighbours.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from runtime_support import (
    RUNTIME_SCRIPTS,
    copy_package,
    installed_package,
    run_child,
    run_fix,
    venv_python,
)

pytestmark = [pytest.mark.runtime, pytest.mark.slow]

PROBE = Path(__file__).resolve().parent / "probe_capture.py"
RELEASE = "0.5.23"
SET_LAYERS, GET_EMBED_AND_HEAD = "set_eagle3_layers_to_capture", "get_embed_and_head"
FIXER = "eaglelint fix --write"  # the members come from the fixer, run on the copy



@dataclass(frozen=True)
class Family:
    module: str  # srt/models/<module>.py
    missing: tuple[str, ...]  # the members the release's class lacks
    ids: tuple[int, ...]  # the ids the engine is started with
    outputs: tuple[int, ...]  # the layers whose output the aux states must be, for `ids`
    outputs_none: tuple[int, ...]  # the same for set_eagle3_layers_to_capture(None)
    members: str  # who writes them: FIXER
    forward_edited: bool = False  # the released forward never hands aux on; the fixer edits it too
    loops: int = 1  # times the decoder runs its stack per token (Nanbeige's num_loops); ids count layer steps
    # mixers whose kernels cannot run on CPU, "Class" (its forward) or "Layer.method" (the layer's call of its mixer),
    # replaced by standins.stand_in_mixer: the decoder, its layers' norms, residuals and capture stay SGLang's
    stand_ins: tuple[str, ...] = ()
    disable_radix_cache: bool = False  # SGLang's Mamba radix cache asserts snapshot support, absent on CPU
    absent_sinks: bool = False  # the attention passes sinks=None, which torch_native's decode is let take
    placeholder_streams: bool = False  # the decoder creates CUDA side streams it uses only on GPU paths
    layers: int = 4  # in the tiny checkpoint

    @property
    def path(self) -> str:
        return f"srt/models/{self.module}.py"


# 4 layers each. Ids [0, 2] are the outputs of layers 0 and 2: a decoder that captures on layer entry
# must be given layers 1 and 3, and without the +1 would hand over the embedding and layer 1's output.
# A decoder that captures after the layer runs is given [0, 3]: the last layer's output too, which a
# +1 would push past the stack. With None, Llama's default [2, 2, 1] as layer entries: the outputs of
# layers 0 and 1, in layer order.
FAMILIES = {
    "Glm4ForCausalLM": Family("glm4", (SET_LAYERS,), (0, 2), (0, 2), (0, 1), FIXER),
    "ArceeForCausalLM": Family("arcee", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1), FIXER),
    # the release's own set_eagle3_layers_to_capture stays; only get_embed_and_head is written
    "Qwen2MoeForCausalLM": Family("qwen2_moe", (GET_EMBED_AND_HEAD,), (0, 2), (0, 2), (0, 1), FIXER),
    "BeamForCausalLM": Family("beam", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 3), (0, 3), (0, 1), FIXER),
    # the fixer also edits the served forward: the flag set in __init__, the decoder's (hidden, aux) unpacked
    # under it and aux handed to the logits processor, which the released forward never passes
    "MiMoForCausalLM": Family("mimo", (SET_LAYERS,), (0, 2), (0, 2), (0, 1), FIXER, forward_edited=True),
    # captures the stream entering layer k + 1 before calling it (no layer boundary); both members written
    "MuseGlimmerForCausalLM": Family("muse_glimmer", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1), FIXER),
    # both members and the forward edit, as MiMo; its vision tower is built and loaded, and text-only decode
    # steps never call it
    "Qwen2VLForConditionalGeneration": Family("qwen2_vl", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1),
                                              FIXER, forward_edited=True),
    # a loop model: the 4 layers run twice per token, steps 0..7, and the decoder captures the stream entering step
    # k + 1. Id 5 is layer 1 in the second loop; None counts the steps (8): [1, 3, 4], step 3's output being the
    # stream the second loop's first layer receives (folded and normed between the loops)
    "NanbeigeForCausalLM": Family("nanbeige", (SET_LAYERS,), (0, 5), (0, 5), (1, 3, 4), FIXER, loops=2),
}
# Run only where EAGLELINT_RUNTIME_ALL_FAMILIES=1, each about 28 to 38 s of the test command: families whose
# decoders capture as one of the above does (the layer boundary takes the capture on entering the layer), and the
# hybrid families, whose sequence mixers are stood in (docs/runtime.md), and MiMo-V2
MORE_FAMILIES = {
    # captures on entering layer k + 1, and the last layer's output at the final norm: [0, 3] needs both
    "LagunaForCausalLM": Family("laguna", (SET_LAYERS,), (0, 3), (0, 3), (0, 1), FIXER),
    # attention layers only (Granite 4.0 Micro's shape); with a Mamba layer it is not tried (docs/runtime.md)
    "GraniteMoeHybridForCausalLM": Family("granitemoehybrid", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 2), (0, 2), (0, 1),
                                          FIXER),
    # Mamba-2, MLP, attention, MLP, one block a layer; the Mamba layer's call of its mixer is stood in. Captures the
    # stream entering layer k + 1 (its boundary's capture_output), and after the last layer at the end
    "NemotronHForCausalLM": Family("nemotron_h", (SET_LAYERS,), (0, 3), (0, 3), (0, 1), FIXER,
                                   stand_ins=("NemotronHMambaDecoderLayer._forward_mamba",),
                                   disable_radix_cache=True),
    # short convolution, attention, convolution, attention; the convolutions stood in. The fixed member hands the
    # decoder's own setter id + 1: the layer appends its input, and the decoder the last layer's output at the end
    "Lfm2ForCausalLM": Family("lfm2", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 3), (0, 3), (0, 1), FIXER,
                              stand_ins=("Lfm2ShortConv",)),
    # LFM2's decoder and member with a dense first layer then sparse MLPs (FusedMoE); the convolutions stood in
    "Lfm2MoeForCausalLM": Family("lfm2_moe", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 3), (0, 3), (0, 1), FIXER,
                                 stand_ins=("Lfm2MoeShortConv",)),
    # Kimi delta attention in layers 0 to 2 (stood in), NoPE MLA in layer 3. The decoder snapshots layer k's output
    # after it runs, for k in its DSpark list: no shift, so [0, 3] (a + 1 would name a layer past the stack)
    "KimiLinearForCausalLM": Family("kimi_linear", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 3), (0, 3), (0, 1), FIXER,
                                    stand_ins=("KimiDeltaAttention",), disable_radix_cache=True),
    # Kimi-K3's text model on the standard residual path (no attention-residual bank), KDA and MLA as Kimi-Linear.
    # The fixed member fills the DSpark list, and this decoder takes layer k's output on entering layer k + 1
    # (capture_gathered, asked for k) or at the final norm: no shift, so [0, 7]. Its side CUDA streams are created
    # as placeholders and never used. 8 layers: it packs one slot per listed id, as MiMo-V2 does
    "KimiK3LinearForCausalLM": Family("kimi_k3", (SET_LAYERS, GET_EMBED_AND_HEAD), (0, 7), (0, 7), (1, 3, 4), FIXER,
                                      stand_ins=("KimiK3DeltaAttention",), disable_radix_cache=True,
                                      placeholder_streams=True, layers=8),
    # KDA in layers 0 to 2 (stood in), MLA in layer 3, one group of 4. Captures layer k's output on entering layer
    # k + 1 (the boundary's capture there, where k is listed), and the last layer's at the final norm: no shift
    "BailingMoeV3ForCausalLM": Family("bailing_moe_v3", (SET_LAYERS,), (0, 3), (0, 3), (0, 1), FIXER,
                                      stand_ins=("BailingKDA",), disable_radix_cache=True),
    # a full-attention layer then sliding ones; its attention passes sinks=None, which torch_native's decode is let
    # take. Captures the stream entering layer k + 1 (capture_gathered), the last layer's output after the loop.
    # 8 layers: its decoder packs one slot per listed id, and None's [1, n // 2 - 1, n - 4] names layer 1 twice
    # with 4 ("RuntimeError: captured 2 of 3 aux hidden states"); with 8, [1, 3, 4]
    "MiMoV2ForCausalLM": Family("mimo_v2", (SET_LAYERS,), (0, 7), (0, 7), (1, 3, 4), FIXER, absent_sinks=True,
                                layers=8),
}
if os.environ.get("EAGLELINT_RUNTIME_ALL_FAMILIES") == "1":
    FAMILIES.update(MORE_FAMILIES)


def prepare_tree(tree: Path) -> dict[str, str]:
    """Write the members into the copy with `eaglelint fix --write`, run on each family's file alone;
    the fixer's report per family."""
    done = {}
    for cls, family in FAMILIES.items():
        assert family.members == FIXER
        fixed = run_fix(tree / "sglang" / family.path, sys.executable)
        assert fixed.returncode in (0, 1), fixed.stderr
        done[cls] = "fixer: " + fixed.stdout.strip()[-2000:]
    return done


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    python = venv_python(RELEASE)
    released = installed_package(python)
    tree = copy_package(released, tmp_path_factory.mktemp("sglang-capture"))
    prepared = prepare_tree(tree)
    changed = changed_files(tree, released)
    return {"python": python, "released": released, "tree": tree, "prepared": prepared, "changed": changed,
            "root": tree.parent}


_REPORTS: dict[tuple[str, str], dict] = {}


def probe(release: dict, cls: str, mode: str) -> dict:
    """The probe's report for family `cls`, started with its ids (`mode` "ids") or with None; run once."""
    key = (cls, mode)
    if key not in _REPORTS:
        family = FAMILIES[cls]
        root = release["root"] / cls
        if not (root / "target").is_dir():
            write_checkpoint(release["python"], cls, root)
        ids = "none" if mode == "none" else ",".join(map(str, family.ids))
        out = root / f"report-{mode}.json"
        started = time.monotonic()
        extra = [arg for name in family.stand_ins for arg in ("--stand-in-mixer", name)]
        extra += ["--disable-radix-cache"] if family.disable_radix_cache else []
        extra += ["--absent-sinks"] if family.absent_sinks else []
        extra += ["--placeholder-streams"] if family.placeholder_streams else []
        report = run_child(release["python"], PROBE,
                           ["--module", family.module, "--cls", cls, "--target", str(root / "target"),
                            "--layer-ids", ids, "--unfixed", str(release["released"] / family.path),
                            "--out", str(out), *extra], out, release["tree"])
        report["probe_wall_s"] = round(time.monotonic() - started, 1)
        print(f"{cls} ({mode}): probe {report['probe_wall_s']} s")
        _REPORTS[key] = report
    return _REPORTS[key]


def write_checkpoint(python: Path, cls: str, root: Path) -> None:
    """The family's tiny checkpoint in root/target."""
    done = subprocess.run([str(python), str(RUNTIME_SCRIPTS / "tiny_checkpoints.py"), str(root),
                           "--family", cls, "--layers", str(FAMILIES[cls].layers)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]


def changed_files(tree: Path, released: Path) -> list[str]:
    """The files of the copied package (`tree`/sglang) whose bytes differ from the release's, sorted."""
    return sorted(str(p.relative_to(tree / "sglang")) for p in (tree / "sglang").rglob("*.py")
                  if p.read_bytes() != (released / p.relative_to(tree / "sglang")).read_bytes())


def assert_members_as_released(unfixed: dict, family: Family) -> None:
    """The release's class, probed as released: calling each member it lacks raises AttributeError
    naming it; the others are there."""
    for name in (SET_LAYERS, GET_EMBED_AND_HEAD):
        error = unfixed["members"][name]
        if name in family.missing:
            assert error is not None and error.startswith("AttributeError") and name in error, unfixed
        else:
            assert error is None, unfixed


def assert_decode_steps(forward: dict, family: Family, mode: str) -> None:
    """Three decode steps of the fixed class: every layer step's output was read, and the aux states
    handed to the logits processor are exactly the outputs of the engine's layers, in layer order."""
    expected = [[k] for k in (family.outputs if mode == "ids" else family.outputs_none)]
    steps = family.layers * family.loops
    assert forward["num_layers"] == family.layers and forward["layer_steps"] == steps
    assert len(forward["steps"]) == 3
    for step in forward["steps"]:
        assert step["mode"] == "DECODE" and step["capture_hidden_mode"] == "FULL"
        assert step["layer_outputs_read"] == list(range(steps))  # every step's output seen
        # each aux state equals exactly one layer's output, the engine's layer, in layer order
        assert step["aux_equals_output_of"] == expected, step["aux_max_diff_to_output_of"]
        assert step["aux_shapes"] == [[1, 64]] * len(expected)
        assert step["logits_shape"] == [1, 256] and step["logits_finite"] is True


# what get_embed_and_head returns on the tiny checkpoints: the model's own embedding and head
MODELS_OWN_TENSORS = {"embed_is_models": True, "head_is_models": True, "embed_shape": [256, 64],
                      "head_shape": [256, 64]}


def started(report: dict, cls: str) -> dict:
    assert "start_error" not in report, f"{cls} did not start: {report['start_error']}"
    return report


def test_prepare_tree_changes_only_the_families_files(release):
    unchanged = {cls: release["prepared"][cls] for cls, f in FAMILIES.items() if f.path not in release["changed"]}
    assert not unchanged, f"prepare_tree left these families as released: {unchanged}"
    assert release["changed"] == sorted(f.path for f in FAMILIES.values())


@pytest.mark.parametrize("cls", FAMILIES)
def test_release_class_lacks_the_members_and_the_engine_refuses_it(cls, release):
    family = FAMILIES[cls]
    unfixed = started(probe(release, cls, "ids"), cls)["unfixed"]
    assert unfixed["file"] == str(release["released"] / family.path)
    assert_members_as_released(unfixed, family)
    if SET_LAYERS in family.missing:  # SGLang's configure_aux_hidden_state_capture checks for it first
        assert unfixed["engine_setup_error"].startswith("ValueError") and SET_LAYERS in unfixed[
            "engine_setup_error"], unfixed
        # a released forward that reads the flag sets it False; one the fixer edits has no flag at all
        assert unfixed["capture"]["capture_aux_hidden_states"] is (None if family.forward_edited else False)
    else:
        assert unfixed["engine_setup_error"] is None, unfixed


@pytest.mark.parametrize("cls", FAMILIES)
def test_tiny_checkpoint_fills_every_parameter_through_sglangs_loader(cls, release):
    assert started(probe(release, cls, "ids"), cls)["unfixed"]["unloaded_params"] == []


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_engine_start_up_calls_set_eagle3_layers_to_capture(cls, mode, release):
    report = started(probe(release, cls, mode), cls)
    assert report["class"] == f"sglang.srt.models.{FAMILIES[cls].module}.{cls}"
    assert report["class_file"] == str(release["tree"] / "sglang" / FAMILIES[cls].path)
    calls = [c for c in report["calls"] if c["method"] == SET_LAYERS]
    expected_args = [list(FAMILIES[cls].ids)] if mode == "ids" else ["NoneType"]
    assert calls == [{"method": SET_LAYERS, "args": expected_args,
                      "caller": "srt/model_executor/model_runner_components/attention_backend_setup.py:"
                                "configure_aux_hidden_state_capture"}]
    assert report["capture"]["capture_aux_hidden_states"] is True


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_aux_states_handed_to_the_logits_processor_are_the_outputs_of_the_engines_layers(cls, mode, release):
    assert_decode_steps(started(probe(release, cls, mode), cls)["forward"], FAMILIES[cls], mode)


@pytest.mark.parametrize("mode", ["ids", "none"])
@pytest.mark.parametrize("cls", FAMILIES)
def test_only_the_named_mixers_are_stood_in_and_they_ran(cls, mode, release):
    family = FAMILIES[cls]
    calls = started(probe(release, cls, mode), cls)["stood_in_calls"]
    module = f"sglang.srt.models.{family.module}"
    expected = [f"{module}.{name}" + ("" if "." in name else ".forward") for name in family.stand_ins]
    if family.absent_sinks:  # decode steps only
        expected.append("sglang.srt.layers.attention.torch_native_backend.TorchNativeAttnBackend.forward_decode")
    assert sorted(calls) == sorted(expected)
    assert all(n > 0 and n % 3 == 0 for n in calls.values()), calls  # once per layer it serves and decode step


@pytest.mark.parametrize("cls", FAMILIES)
def test_get_embed_and_head_returns_the_models_own_tensors(cls, release):
    assert started(probe(release, cls, "ids"), cls).get("get_embed_and_head") == MODELS_OWN_TENSORS
