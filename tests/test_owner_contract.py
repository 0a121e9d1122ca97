"""Owner members read off the decoder (fix/owner.py `contract_member`), proven by execution.

fixtures/owner_contract holds owners over decoders no class of the tree drives: nothing to
copy. Each decoder marks its capture another way (before or after the layer call, handed to
the layer, asking about the layer before, behind a switch of its own). `eaglelint fix --write`
writes the members; the fixed module then runs on the stand-ins (tests/sglang_standins.py:
layer k adds 2**k, so a captured value names the layers that ran before it) and the aux
states that reach the logits processor must be exactly the engine's layers, for given ids
and for None. The unfixed module must fail the same run, so the test can fail.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sglang_standins as standins
from conftest import FIXTURES
from test_chain_oracle import ASKED, drive

ROOT = FIXTURES / "owner_contract"
MODULE = "sglang.srt.models.contract_owners"
CLASSES = ("BeforeOwnerForCausalLM", "AfterOwnerForCausalLM", "HandedOwnerForCausalLM",
           "PreviousLayerOwnerForCausalLM", "FlaggedOwnerForCausalLM", "OwnForwardSubclassForCausalLM")


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
    members = text.split("def set_eagle3_layers_to_capture")[1:]
    shifted = ["[val + 1 for val in layer_ids]" in m.split("\n    def ")[0] for m in members]
    assert shifted == [True, False, True, False, True, True]  # before, after, handed, layer before, flagged, looped
    assert "self.model.mark_layers([val + 1 for val in layer_ids])" in members[-2]  # the decoder's own method


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
