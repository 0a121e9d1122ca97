"""vLLM loaders given only `hf_config=X`: the architectures vLLM's own code writes to X
before the call (fixtures/check/vllm_registry/.../config_written.py and config.py) are
the candidates; the findings say which, and why the marker is or is not right."""

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

TREE = FIXTURES / "check" / "vllm_registry"


@pytest.fixture(scope="module")
def found():
    findings = check_files(discover([TREE]).files, CheckOptions(tuple(select_interfaces(["vllm"])))).findings
    return {f.class_name: f for f in findings if f.path.endswith("config_written.py")}


def test_every_candidate_is_named_and_what_any_needs_is_forwarded(found):
    message = found["BranchesToListers"].sentence
    assert "DeepForCausalLM, TextForCausalLM" in message
    assert "forward set_aux_hidden_state_layers" in message  # DeepForCausalLM's own setter


def test_a_mixed_choice_names_who_lists_the_marker(found):
    assert "listed by TextForCausalLM, not by PlainForCausalLM" in found["BranchesMixed"].sentence
    assert "checkpoint's config" in found["OneBranchWritten"].sentence


def test_a_config_update_decides_per_served_architecture(found):
    """UpdatedSub's update writes unconditionally: its own finding; BranchUpdatedSub's
    only on a branch: its base's choice, named in the base's finding."""
    assert found["UpdatedSub"].subclasses == ()
    assert found["UpdatedBase"].subclasses == ("BranchUpdatedSub",)
    assert "BranchUpdatedSub" not in found and "BranchesToPlain" not in found


def test_known_candidates_without_the_marker_are_named_beside_the_checkpoints_choice(found):
    message = found["LiteralOrNone"].sentence
    assert "PlainForCausalLM (none lists SupportsEagle3) or chosen at load time by the checkpoint's config" in message
