"""Owner members read off the decoder (fix/owner.py `contract_member`), proven by execution.

fixtures/owner_contract holds owners over decoders no class of the tree drives: nothing to
copy. Each decoder marks its capture another way (before or after the layer call, handed to
the layer, asking about the layer before, behind a switch of its own, into a list of a name of
its own that another algorithm's setter writes, numbered across repeated loops; a subclass with
a forward of its own). `eaglelint fix --write`
writes the members; the fixed module then runs on the stand-ins (tests/sglang_standins.py:
layer k adds 2**k, so a captured value names the layers that ran before it) and the aux
states that reach the logits processor must be exactly the engine's layers, for given ids
and for None. The unfixed module must fail the same run, so the test can fail.
"""

from __future__ import annotations

import ast
import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sglang_standins as standins
from conftest import FIXTURES
from test_chain_oracle import ASKED, drive, layer_of

from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.owners import OwnerAnalysis

ROOT = FIXTURES / "owner_contract"
MODULE = "sglang.srt.models.contract_owners"
CLASSES = ("BeforeOwnerForCausalLM", "AfterOwnerForCausalLM", "HandedOwnerForCausalLM",
           "PreviousLayerOwnerForCausalLM", "FlaggedOwnerForCausalLM", "TapOwnerForCausalLM",
           "OwnForwardSubclassForCausalLM", "RelayOwnerForCausalLM")
# SGLang's default layers for None (LlamaForCausalLM: 2, n // 2 and n - 3, captured before those
# layers run): the outputs of layers 1, n // 2 - 1 and n - 4
DEFAULT = ["1", str(standins.NUM_LAYERS // 2 - 1), str(standins.NUM_LAYERS - 4)]
TWO_PATHS = FIXTURES / "check" / "sglang/srt/models/EGL041_owner_two_capture_paths.py"


def eaglelint(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True)


def outcomes(root: Path) -> dict[str, list[str | None]]:
    """Per class: how `drive` went for the ids asked and for None (None: as the engine needs)."""
    with standins.installed(root):
        module = importlib.import_module(MODULE)
        return {name: [drive(getattr(module, name), ids) for ids in (ASKED, None)] for name in CLASSES}


@pytest.fixture(scope="module")
def fixed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("contract") / "owner_contract"
    shutil.copytree(ROOT, root)
    done = eaglelint("fix", "--write", "--no-cache", root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_unfixed_owners_fail_at_the_engines_call():
    for name, runs in outcomes(ROOT).items():
        assert all(run and "set_eagle3_layers_to_capture raises AttributeError" in run for run in runs), name


@pytest.mark.parametrize("name", CLASSES)
def test_fixed_owner_hands_the_engines_layers_to_the_logits_processor(fixed, name):
    assert outcomes(fixed)[name] == [None, None]


def test_fixed_tree_has_no_finding_left_and_the_fix_is_a_fixed_point(fixed):
    after = eaglelint("check", "--no-cache", fixed)
    assert after.returncode == 0, after.stdout
    again = eaglelint("fix", "--write", "--no-cache", fixed)
    assert again.stdout.startswith("Added 0 methods"), again.stdout


def test_the_shift_follows_where_the_decoder_captures(fixed):
    text = (fixed / "sglang/srt/models/contract_owners.py").read_text()
    written = {c.name: ast.unparse(f) for c in ast.parse(text).body if isinstance(c, ast.ClassDef)
               for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "set_eagle3_layers_to_capture"}
    shifted = {name: "[val + 1 for val in layer_ids]" in member for name, member in written.items()}
    assert shifted == {"BeforeOwnerForCausalLM": True, "AfterOwnerForCausalLM": False, "HandedOwnerForCausalLM": True,
                       "PreviousLayerOwnerForCausalLM": False, "FlaggedOwnerForCausalLM": True,
                       "LoopedOwnerForCausalLM": True, "TapOwnerForCausalLM": False,
                       "RelayOwnerForCausalLM": False}  # the subclass inherits its own
    assert "self.model.mark_layers([val + 1 for val in layer_ids])" in written["FlaggedOwnerForCausalLM"]
    assert "self.model.tap_layer_ids = layer_ids" in written["TapOwnerForCausalLM"]


def _unrolled(steps: int) -> int:
    """The stand-in state after `steps` unrolled layer steps of LoopedModel (layer i adds 2**i)."""
    return sum(2 ** (step % standins.NUM_LAYERS) for step in range(steps))


def test_fixed_looped_owner_captures_the_unrolled_steps_the_engine_names(fixed):
    """The ids number the steps across both repeats (SGLang's loop models: num_hidden_layers *
    num_loops); None counts them all: [1, n // 2 - 1, n - 4] over the 2 * 8 steps."""
    with standins.installed(fixed):
        module = importlib.import_module(MODULE)
        for ids, steps in (([1, 9, 14], [1, 9, 14]), (None, [1, 7, 12])):
            model = module.LoopedOwnerForCausalLM(standins.config())
            standins.CALLS.clear()
            model.set_eagle3_layers_to_capture(ids)
            model.forward([1, 2, 3], [0, 1, 2], standins.ForwardBatch())
            (args, _), = standins.CALLS
            assert list(args[4]) == [_unrolled(k + 1) for k in steps], ids


def captured(model: object, layer_ids: list[int] | None, setter: str = "set_eagle3_layers_to_capture") -> list[str]:
    """The layers whose outputs reach the logits processor after one call of `setter` and one forward."""
    standins.CALLS.clear()
    getattr(model, setter)(layer_ids)
    model.forward([1, 2, 3], [0, 1, 2], standins.ForwardBatch())  # type: ignore[attr-defined]
    [(args, kwargs)] = standins.CALLS
    return [layer_of(v) for v in (args[4] if len(args) > 4 else kwargs["aux_hidden_states"])]


@pytest.mark.parametrize("name", ["tap_layer_ids", "dspark_layers_to_capture"])
def test_a_list_of_any_name_gets_exactly_the_engines_layers(fixed, tmp_path, name):
    """TapModel reads `tap_layer_ids`, which only another algorithm's setter writes: the member
    read off the decoder drives it, for the engine's ids and for None (the default layers). The
    list's name decides nothing: spelled as DSpark's, the same member is written and works."""
    root = fixed
    if name != "tap_layer_ids":
        root = tmp_path / "owner_contract"
        shutil.copytree(ROOT, root)
        module = root / "sglang/srt/models/contract_owners.py"
        module.write_text(module.read_text().replace("tap_layer_ids", name))
        done = eaglelint("fix", "--write", "--no-cache", root)
        assert done.returncode == 0, done.stdout + done.stderr
    with standins.installed(root):
        owner = importlib.import_module(MODULE).TapOwnerForCausalLM
        assert captured(owner(standins.config()), ASKED) == [str(k) for k in ASKED]
        assert captured(owner(standins.config()), None) == DEFAULT


def test_two_capture_paths_that_disagree_get_no_member_and_no_one_shift_serves_both():
    """The refusal is right: each shift gives the engine's layers on one path and the wrong ones
    on the other (after the layer: k gives layer k; before it: k gives layer k - 1), and the
    finding names both places it captures."""
    got = {}
    with standins.installed(FIXTURES / "check"):
        module = importlib.import_module(f"sglang.srt.models.{TWO_PATHS.stem}")
        for shift in (0, 1):
            for reads_inputs in (False, True):
                config = standins.config()
                config.reads_layer_inputs = reads_inputs
                model = module.TwoPathForCausalLM(config)
                got[shift, reads_inputs] = captured(model, [k + shift for k in ASKED], "set_stream_layers_to_capture")
    assert got == {(0, False): ["1", "4"], (0, True): ["0", "3"], (1, False): ["2", "5"], (1, True): ["1", "4"]}
    done = eaglelint("check", "--no-cache", "--output-format", "json", TWO_PATHS)
    [finding] = [f for f in json.loads(done.stdout) if f["method"] == "set_eagle3_layers_to_capture"]
    assert (finding["code"], finding["class"]) == ("EGL041", "TwoPathForCausalLM")
    lines = TWO_PATHS.read_text().splitlines()
    places = [i for i, line in enumerate(lines, 1) if "write_stream(hidden_states, out=" in line]
    assert len(places) == 2 and all(f"{TWO_PATHS.name}:{line}" in finding["fix_refusal"] for line in places)


def test_the_helper_handed_the_collector_is_read_for_that_collector_alone():
    """What TwoPathModel's helper makes and hands on under its test (`LayerCall`, under a test
    that also reads the layer's `prepared`) is no capture: the decoder reads its list, no flag."""
    resolver = Resolver(Project())
    capture = OwnerAnalysis(resolver).chains.decoder(ClassEntity(str(TWO_PATHS), "TwoPathModel"))
    assert (capture.attrs, capture.flags, capture.returns_aux) == (frozenset({"stream_layer_ids"}), frozenset(), True)
    assert [placement for placement, _ in capture.sites] == ["after", "before"]


class _Rank:
    """One pipeline rank of two, each running half the layers."""

    def __init__(self, first: bool, last: bool):
        self.is_first_rank, self.is_last_rank, self.world_size = first, last, 2


def _pipelined(module: object, layer_ids: list[int] | None, at_input: bool) -> list[str]:
    """RelayOwnerForCausalLM over two ranks as the engine drives them: each rank's model gets
    `set_eagle3_layers_to_capture`, rank 0 runs its layers and hands its proxy tensors to rank 1,
    whose logits processor call is returned as the layers it got."""
    half = standins.NUM_LAYERS // 2
    models = []
    for first, last, span in ((True, False, (0, half)), (False, True, (half, standins.NUM_LAYERS))):
        config = standins.config()
        config.capture_at_input = at_input
        model = module.RelayOwnerForCausalLM(config)  # type: ignore[attr-defined]
        model.pp_group = model.model.pp_group = _Rank(first, last)
        model.model.start_layer, model.model.end_layer = span
        model.set_eagle3_layers_to_capture(layer_ids)
        models.append(model)
    standins.CALLS.clear()
    proxy = models[0].forward([1, 2, 3], [0, 1, 2], standins.ForwardBatch())
    models[1].forward([1, 2, 3], [0, 1, 2], standins.ForwardBatch(), proxy)
    [(args, _)] = standins.CALLS
    return [layer_of(v) for v in args[4]]


@pytest.mark.parametrize("at_input", [False, True])
def test_a_decoder_that_hands_captures_across_pipeline_ranks_gets_a_member_every_rank_runs(fixed, at_input):
    """RelayModel captures on every rank and hands its captures on with the proxy tensors; its
    owner unpacks them only on the last rank. A pipeline guard in the member (return on the
    ranks before the last) would lose the layers of rank 0: the member has none, and both
    forms of its capture (layer k's output handed on as layer k + 1's input, or taken after
    layer k) read one shift, so the layers the engine names arrive from both ranks."""
    text = (fixed / "sglang/srt/models/contract_owners.py").read_text()
    [member] = [ast.unparse(f) for c in ast.parse(text).body if isinstance(c, ast.ClassDef)
                and c.name == "RelayOwnerForCausalLM" for f in c.body
                if isinstance(f, ast.FunctionDef) and f.name == "set_eagle3_layers_to_capture"]
    assert "pp_group" not in member
    with standins.installed(fixed):
        module = importlib.import_module(MODULE)
        assert _pipelined(module, [1, 6], at_input) == ["1", "6"]
        assert _pipelined(module, None, at_input) == DEFAULT


def test_the_pipeline_guard_is_written_where_every_rank_unpacks(fixed):
    """BeforeOwnerForCausalLM unpacks the decoder's pair on every rank: a rank before the last
    would unpack its proxy tensors, so its member returns there first, as SGLang's Llama's."""
    text = (fixed / "sglang/srt/models/contract_owners.py").read_text()
    [member] = [ast.unparse(f) for c in ast.parse(text).body if isinstance(c, ast.ClassDef)
                and c.name == "BeforeOwnerForCausalLM" for f in c.body
                if isinstance(f, ast.FunctionDef) and f.name == "set_eagle3_layers_to_capture"]
    assert "if not self.pp_group.is_last_rank:\n        return" in member
