"""`eaglelint support`: a class whose language model the checkpoint chooses gets a verdict per model
it may hold, each what `support --config` answers for a checkpoint that gives that model. On our
fixture (fixtures/check/.../checkpoint_chosen_lm.py) and on SGLang 0.5.23, whose rows were read by
hand (file:line under sglang/srt/models in the comments)."""

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES

from eaglelint.packs import select_interfaces
from eaglelint.pipeline.checkpoint import checkpoint_verdicts
from eaglelint.pipeline.support import (
    AFTER_FIX,
    DEPENDS,
    FAILS,
    FIXABLE,
    NAMED_CANDIDATES,
    WORKS,
    Candidate,
    Row,
    dependence,
    support_matrix,
)

TREE = FIXTURES / "check"
MODELS = TREE / "sglang" / "srt" / "models"  # the folder of registry.py: `support --config` resolves there


def eaglelint(*args):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True)


def rows_by_class(rows, pack="eagle3"):
    return {r.entry: r for r in rows if r.pack == pack}


def verdicts(row):
    return {c.name: c.verdict for c in row.candidates}


@pytest.fixture(scope="module")
def fixture_rows():
    return rows_by_class(support_matrix([TREE], select_interfaces(None)))


# After `fix --write` writes the wrapper's delegations, a checkpoint works where the model it gives
# has the members (or gets them from the fix) and its decoder collects, and fails otherwise.
FIXTURE_CANDIDATES = {
    "ArchChosenVL": {
        "OwnerDecoderForCausalLM": AFTER_FIX,  # has both members; only the wrapper's delegations are missing
        "OwnerVLForConditionalGeneration": AFTER_FIX,  # EGL040: the fix writes its members too
        "LonelyForCausalLM": FAILS,  # EGL041: its members must be written by hand
        "NoCollectOwnerForCausalLM": FAILS,  # its decoder collects no aux hidden states
    },
    "EveryChoiceCapturesVL": {"OwnerDecoderForCausalLM": AFTER_FIX, "FixedFlagVLForConditionalGeneration": AFTER_FIX},
    "VersionChosenVL": {
        "CapturingVersion": AFTER_FIX,  # EGL001: delegations to its llm, an OwnerDecoderForCausalLM
        "PlainVersion": FAILS,  # inherits them, but its llm (NoCollectOwnerForCausalLM) lacks the members
    },
    # DispatchV1 lacks the members; DispatchV3 has them, but its setter raises on every path
    "MixedDispatchVL": {"DispatchV1": FAILS, "DispatchV3": FAILS},
}


@pytest.mark.parametrize("entry", sorted(FIXTURE_CANDIDATES))
def test_each_model_the_checkpoint_may_choose_is_judged_after_the_fix(fixture_rows, entry):
    assert verdicts(fixture_rows[entry]) == FIXTURE_CANDIDATES[entry]


def test_the_row_says_which_work_by_name(fixture_rows):
    row = fixture_rows["ArchChosenVL"]
    assert (row.status, row.attribute, row.codes) == (DEPENDS, "language_model", ("EGL001",))
    said = dependence(row)
    works, _, fails = said.partition(" do not ")
    assert "OwnerDecoderForCausalLM" in works and "OwnerVLForConditionalGeneration" in works
    assert "LonelyForCausalLM" in fails and "NoCollectOwnerForCausalLM" in fails
    assert fixture_rows["EveryChoiceCapturesVL"].status == FIXABLE  # all work: the gap stays a fixable one


ARCH_CHOSEN = {"OwnerDecoderForCausalLM", "OwnerVLForConditionalGeneration", "LonelyForCausalLM",
               "NoCollectOwnerForCausalLM"}


@pytest.mark.parametrize("held", sorted(ARCH_CHOSEN))
def test_a_candidates_verdict_is_what_support_config_says_for_a_checkpoint_giving_it(fixture_rows, held):
    config = {"architectures": ["ArchChosenVL"], "llm_config": {"architectures": [held]}}
    (verdict,) = checkpoint_verdicts([MODELS], select_interfaces(None), config)
    assert verdict.pick is not None and verdict.pick.cls.qualname == held
    assert verdict.status == verdicts(fixture_rows["ArchChosenVL"])[held]


@pytest.mark.parametrize("version, status, chosen", [
    ("1.0", "supported after `eaglelint fix --write`", "CapturingVersion"),  # it delegates, once fixed
    (2.0, "not supported", "PlainVersion"),  # a float in the config: str(2.0) is "2.0" as well
    ("3.0", "not supported", None),  # no entry: the class raises ValueError
])
def test_a_version_table_is_read_as_the_class_computes_its_key(version, status, chosen):
    """VersionChosenVL computes `tuple(int(x) for x in str(config.version).split("."))` and looks
    it up in a module-level table: `support --config` follows the same steps to the class."""
    (verdict,) = checkpoint_verdicts([MODELS], select_interfaces(None),
                                     {"architectures": ["VersionChosenVL"], "version": version})
    assert verdict.status == status
    key = tuple(int(x) for x in str(version).split("."))  # what the class computes, computed here
    assert f"version is {key!r}" in verdict.reason
    assert (f"it holds {chosen} as self.version_model" in verdict.reason) if chosen else "no entry" in verdict.reason


def test_a_version_table_without_its_key_in_the_config_is_unknown():
    (verdict,) = checkpoint_verdicts([MODELS], select_interfaces(None), {"architectures": ["VersionChosenVL"]})
    assert verdict.status == "unknown" and "the config has no version" in verdict.reason


def _row(n_work, n_fail):
    def cand(i, verdict):
        return Candidate("/m.py", f"M{verdict[:3]}{i}", i, "supported", verdict, "")
    candidates = tuple(cand(i, WORKS) for i in range(n_work)) + tuple(cand(i, FAILS) for i in range(n_fail))
    return Row("/w.py", "W", "eagle3", DEPENDS, "delegate x to self.language_model", ("EGL001",),
               "language_model", candidates)


def test_a_long_group_is_counted_and_verbose_names_it():
    row = _row(2, NAMED_CANDIDATES + 1)
    short, verbose = dependence(row), dependence(row, verbose=True)
    assert short.endswith(f"2 work (Msup0, Msup1), {NAMED_CANDIDATES + 1} do not (--verbose names them)")
    assert all(f"Mnot{i}" in verbose for i in range(NAMED_CANDIDATES + 1))
    assert dependence(_row(1, NAMED_CANDIDATES)).count("Mnot") == NAMED_CANDIDATES  # up to the limit: named


def test_json_carries_a_verdict_per_candidate_and_verbose_names_every_one():
    done = eaglelint("support", TREE, "--output-format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["class"]: r for r in json.loads(done.stdout) if r["pack"] == "eagle3"}
    row = rows["ArchChosenVL"]
    assert row["status"] == DEPENDS and row["attribute"] == "language_model"
    assert {c["class"]: c["verdict"] for c in row["candidates"]} == FIXTURE_CANDIDATES["ArchChosenVL"]
    assert {"path", "line", "status", "reason"} <= set(row["candidates"][0])
    assert "candidates" not in rows["OwnerDecoderForCausalLM"]  # one model whatever the checkpoint
    tsv = eaglelint("support", TREE, "--output-format", "tsv", "--verbose").stdout.splitlines()
    line = next(x for x in tsv if "\tArchChosenVL\teagle3\t" in x)
    assert line.split("\t")[3] == DEPENDS and "LonelyForCausalLM" in line.split("\t")[4]
    markdown = eaglelint("support", TREE, "--output-format", "markdown").stdout
    assert f"| `ArchChosenVL` | eagle3 | {DEPENDS} |" in markdown


# SGLang 0.5.23, read by hand.
RELEASE = "0.5.23"
RELEASE_CANDIDATES = {
    # internvl.py:546-565 picks by llm_config.architectures[0]; else raises (:566-569)
    "InternVLChatModel": {
        "Qwen2ForCausalLM": AFTER_FIX,  # qwen2.py:767 get_embed_and_head, :781 set_eagle3_layers_to_capture
        "InternLM2ForCausalLM": FAILS,  # internlm2.py:277 defines neither; InternLM2Model collects nothing
        "Qwen3MoeForCausalLM": AFTER_FIX,  # qwen3_moe.py:1125, :1128
        "GptOssForCausalLM": AFTER_FIX,  # gpt_oss.py:1323, :1337
        "Qwen3ForCausalLM": AFTER_FIX,  # qwen3.py:762, :778
    },
    # minicpmv.py:1697-1703 version table; MiniCPMBaseModel.forward (:794) runs self.llm whole
    "MiniCPMV": {
        "MiniCPMV2_6": AFTER_FIX,  # self.llm = Qwen2ForCausalLM (:902): delegations make it work
        "MiniCPMV4_0": AFTER_FIX,  # LlamaForCausalLM (:1069; llama.py:892, :929)
        "MiniCPMV4_5": AFTER_FIX,  # Qwen3ForCausalLM (:1236)
        # Qwen3_5(Moe)ForCausalLM (:1438-1443), a decoder body with the setter (qwen3_5.py:1894) but
        # no get_embed_and_head; MiniCPMV4_6 defines neither, and no fix writes get_embed_and_head
        "MiniCPMV4_6": FAILS,
        "MiniCPMV4_7": FAILS,  # MiniCPMV4_6's subclass (:1664)
    },
}
# llava.py:779-783: the registry's class of transformers' AutoModelForCausalLM class for the text config
LLAVA = {
    "LlamaForCausalLM": (AFTER_FIX, ("code_llama", "llama")),  # llama.py:892, :929
    "Qwen2ForCausalLM": (AFTER_FIX, ("qwen2",)),
    "Gemma3ForConditionalGeneration": (AFTER_FIX, ("gemma3",)),  # gemma3_mm.py:528, :543
    "OlmoForCausalLM": (FAILS, ("olmo",)),  # olmo.py: neither member; OlmoModel collects nothing
    "MixtralForCausalLM": (FAILS, ("mixtral",)),  # mixtral.py: neither member; MixtralModel collects nothing
    "InternLM2ForCausalLM": None,  # no model type of the mapping gives it: never held
}


@pytest.fixture(scope="module")
def release_rows():
    from fetch_sglang import models_dir

    return rows_by_class(support_matrix([models_dir(RELEASE)], select_interfaces(None)))


@pytest.mark.release
@pytest.mark.parametrize("entry", sorted(RELEASE_CANDIDATES))
def test_release_rows_give_each_candidate_its_verdict(release_rows, entry):
    row = release_rows[entry]
    assert row.status == DEPENDS
    assert verdicts(row) == RELEASE_CANDIDATES[entry]


@pytest.mark.release
@pytest.mark.parametrize("entry", ["LlavaForConditionalGeneration", "Mistral3ForConditionalGeneration"])
def test_release_llava_candidates_are_the_registry_classes_the_causal_lm_mapping_gives(release_rows, entry):
    row = release_rows[entry]  # Mistral3 (mistral.py:94) inherits Llava's __init__
    assert (row.status, row.attribute) == (DEPENDS, "language_model")
    found = {c.name: (c.verdict, c.model_types) for c in row.candidates}
    assert {name: found.get(name) for name in LLAVA} == LLAVA
    assert release_rows["LlavaLlamaForCausalLM"].candidates == ()  # always a LlamaForCausalLM (llava.py:551)
