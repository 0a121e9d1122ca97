"""`eaglelint support`: the matrix on our fixtures (each status once, with the reason),
its three output formats, and real releases, rows checked by hand against SGLang's source."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.packs import select_interfaces
from eaglelint.pipeline.support import (
    DEPENDS,
    DRAFT,
    FIXABLE,
    IMPLEMENTABLE,
    NOT_APPLICABLE,
    NOT_SUPPORTED,
    SUPPORTED,
    UNKNOWN,
    support_matrix,
)

TREE = FIXTURES / "check"


def eaglelint(*args):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True)


def statuses(rows, pack="eagle3"):
    return {r.entry: r.status for r in rows if r.pack == pack}


@pytest.fixture(scope="module")
def fixture_rows():
    return support_matrix([TREE], select_interfaces(None))


@pytest.mark.parametrize(("entry", "status"), [
    ("OwnerDecoderForCausalLM", SUPPORTED),  # has both members itself
    ("PPWrapper", UNKNOWN),  # delegates both, to a stub whose decoder cannot be found: the chain is not followed
    ("FixedFlagVLForConditionalGeneration", SUPPORTED),  # its setter marks the layers its decoder reads
    ("FlagVLForConditionalGeneration", NOT_SUPPORTED),  # has the members; the setter writes what is never read
    ("StreamsVLForConditionalGeneration", NOT_SUPPORTED),  # the decoder returns another tuple
    ("NoneVLForConditionalGeneration", NOT_SUPPORTED),  # iterates None
    ("UnflaggedVLForConditionalGeneration", NOT_SUPPORTED),  # served flag never set
    ("PlainWrapperForConditionalGeneration", FIXABLE),  # EGL001: delegation
    ("ChildWrapper", FIXABLE),  # inherits its base's gap
    ("OwnerVLForConditionalGeneration", IMPLEMENTABLE),  # EGL040
    ("OwnerVLMoeForConditionalGeneration", IMPLEMENTABLE),  # inherits it
    ("LonelyForCausalLM", IMPLEMENTABLE),  # EGL041: by hand
    ("NoCollectOwnerForCausalLM", NOT_SUPPORTED),  # decoder overrides forward without collecting
    ("RegisteredChild", UNKNOWN),  # EGL010
    ("OwnerDecoderForCausalLMMTP", DRAFT),  # a draft model
    ("PooledOwnerModel", NOT_APPLICABLE),  # inherits the members; its forward asserts get_embedding
    ("PooledOnlyModel", NOT_APPLICABLE),  # returns a pooler's output, no logits processor call
    ("VersionDispatchVL", NOT_SUPPORTED),  # its __getattr__ forwards to a version model; none has the setter
    # one version it can build lacks both members, the other has them but its setter only raises
    ("MixedDispatchVL", NOT_SUPPORTED),
    # the checkpoint chooses the language model: some work after the fix, some do not
    ("ArchChosenVL", DEPENDS),
    ("VersionChosenVL", DEPENDS),  # its __getattr__ forwards to a version model, one of which can delegate
    ("EveryChoiceCapturesVL", FIXABLE),  # every model it may hold has the members
    ("BidirectionalEmbeddingModel", NOT_APPLICABLE),  # a decoder with the setter that pools embeddings
    ("DualEncoderModel", NOT_APPLICABLE),  # holds a tower's inner model, read off the tower: no logits
    ("DeepGLMForCausalLM", NOT_SUPPORTED),  # its decoder two objects down collects nothing; no members
    ("TextFlagForCausalLM", IMPLEMENTABLE),  # EGL041: its decoder body is named *ForCausalLM
    ("LonelyVLForConditionalGeneration", NOT_SUPPORTED),  # holds as llm a language model lacking them too
    # drafts by what they do, none named as one: the forward reads the batch's spec_info.hidden_states
    ("AssistantForCausalLM", DRAFT),  # itself, inheriting a target's members
    ("UnifiedAssistantForCausalLM", DRAFT),  # through the forward it inherits
    ("HeadOverReaderForCausalLM", DRAFT),  # through the decoder it holds
    ("BlockAssistantModel", DRAFT),  # the DFlash worker hands it the target's hidden states; no logits
    ("SpecAwareForCausalLM", SUPPORTED),  # reads only draft_token_num off spec_info: a target
    # the decoder cannot be followed, but the served forward hands the processor no aux states
    ("LibraryBackedForCausalLM", NOT_SUPPORTED),  # a literal None in their place
    ("SwappableDecoderForCausalLM", NOT_SUPPORTED),  # nothing in their place
    ("LibraryAuxForCausalLM", UNKNOWN),  # passes what the library model returns
    ("OwnProcessorForCausalLM", UNKNOWN),  # a processor of its own: its arguments are not the engine's
    # its decoder, self.thinker.language_model.model, read through the attributes the instances set
    ("ThinkerChainForCausalLM", NOT_SUPPORTED),
])
def test_fixture_statuses(fixture_rows, entry, status):
    assert statuses(fixture_rows)[entry] == status


def test_reasons_name_the_decoder_and_the_fix(fixture_rows):
    rows = {r.entry: r for r in fixture_rows}
    assert "NoCollectDecoderModel" in rows["NoCollectOwnerForCausalLM"].detail
    assert rows["OwnerVLForConditionalGeneration"].detail.startswith("eaglelint fix writes")
    assert rows["LonelyForCausalLM"].detail.startswith("write by hand")
    # the wrapper is pointed at the held model's own gap, the finding that fills it first
    assert "LonelyForCausalLM's gap first (EGL041" in rows["LonelyVLForConditionalGeneration"].detail
    # one member written by the fix, the other by hand: each said with its own finding
    two = rows["TwoPathForCausalLM"]
    assert (two.status, set(two.codes)) == (IMPLEMENTABLE, {"EGL040", "EGL041"})
    assert two.detail.startswith(
        "eaglelint fix writes get_embed_and_head; write by hand set_eagle3_layers_to_capture (")


def test_a_forward_without_aux_is_named_with_its_logits_call(fixture_rows):
    rows = {r.entry: r for r in fixture_rows if r.pack == "eagle3"}
    source = (TREE / "sglang/srt/models/forward_drops_aux.py").read_text().splitlines()
    for entry in ("LibraryBackedForCausalLM", "SwappableDecoderForCausalLM"):
        where = rows[entry].detail.split("forward_drops_aux.py:")[1].split(")")[0]
        assert "self.logits_processor(" in source[int(where) - 1]


def test_one_row_per_entry_and_pack():
    rows = support_matrix([TREE], select_interfaces(["eagle3", "dflash"]))
    keys = [(r.path, r.entry, r.pack) for r in rows]
    assert len(keys) == len(set(keys))
    assert {r.pack for r in rows} == {"eagle3", "dflash"}
    assert statuses(rows, "dflash")["OwnerDecoderForCausalLM"] != SUPPORTED  # no DFlash hook there


def test_output_formats():
    as_json = eaglelint("support", TREE, "--output-format", "json")
    assert as_json.returncode == 0, as_json.stderr
    rows = json.loads(as_json.stdout)
    assert set(rows[0]) == {"path", "class", "pack", "status", "detail"}
    # rows keep absolute paths; the command shows them relative to where it runs (the repository)
    assert {Path(r["path"]).parts[:2] for r in rows} == {("fixtures", "check")}
    markdown = eaglelint("support", TREE, "--output-format", "markdown")
    lines = markdown.stdout.splitlines()
    assert lines[0] == "| file | class | pack | status | detail |" and len(lines) == len(rows) + 2
    tsv = eaglelint("support", TREE, "--output-format", "tsv").stdout.splitlines()
    assert [line.split("\t") for line in tsv] == [["file", "class", "pack", "status", "detail"]] + [
        [r["path"], r["class"], r["pack"], r["status"], " ".join(r["detail"].split())] for r in rows]


def test_into_a_file_or_pipe_every_row_is_written_whole_and_plain():
    """`support > file`: not a terminal, so Markdown rows with the whole names and details, no box drawing."""
    rows = json.loads(eaglelint("support", TREE, "--output-format", "json").stdout)
    piped = eaglelint("support", TREE)
    assert piped.returncode == 0
    lines = piped.stdout.splitlines()
    assert lines[0] == "| file | class | pack | status | detail |" and len(lines) == len(rows) + 2
    for row, line in zip(rows, lines[2:], strict=True):
        assert line.startswith(f"| `{row['path']}` | `{row['class']}` | {row['pack']} | {row['status']} | ")
    assert "…" not in piped.stdout and "┃" not in piped.stdout


def test_on_a_narrow_terminal_the_table_wraps_long_names_instead_of_cutting_them():
    env = {**os.environ, "TTY_COMPATIBLE": "1", "COLUMNS": "90"}
    table = subprocess.run([sys.executable, "-m", "eaglelint", "support", TREE, "--output-format", "table"],
                           capture_output=True, text=True, env=env)
    assert table.returncode == 0 and "┃" in table.stdout and "…" not in table.stdout
    first_column = "".join(line.split("│")[1].strip() for line in table.stdout.splitlines() if line.startswith("│"))
    rows = json.loads(eaglelint("support", TREE, "--output-format", "json").stdout)
    assert first_column == "".join(r["path"] for r in rows)


def test_bad_pack_is_a_usage_error():
    result = eaglelint("support", TREE, "--interface", "nope")
    assert result.returncode == 2 and "Traceback" not in result.stderr


# Rows read by hand in SGLang's source, twenty of each release.
HAND_CHECKED = {
    "0.5.9": {
        "KimiK25ForConditionalGeneration": FIXABLE,  # holds DeepseekV3ForCausalLM, no members (0.5.10 added them)
        "LlamaForCausalLM": SUPPORTED,
        "Qwen3VLForConditionalGeneration": IMPLEMENTABLE,  # SGLang #17935; 0.5.11 wrote the members by hand
        "Qwen2MoeForCausalLM": IMPLEMENTABLE,  # has the setter, decoder returns aux states, no get_embed_and_head
        "OPTForCausalLM": NOT_SUPPORTED,  # OPTModel -> OPTDecoder never collects
        "Gemma3ForConditionalGeneration": NOT_SUPPORTED,  # its Gemma3ForCausalLM lacks both too
        # registry lookup by the checkpoint's text config: no member whichever registered text model
        # it holds (llava.py 0.5.9 defines none), delegated with the raising style; after the fix
        # it works where that model has the members (LlamaForCausalLM, llama.py:749 and :778), not
        # where it lacks them (OlmoForCausalLM, olmo.py)
        "LlavaForConditionalGeneration": DEPENDS,
        # __getattr__ forwards to self.minicpmv, one of MiniCPMV2_6, 4_0, 4_5 (minicpmv.py:1317),
        # each holding as self.llm a model with both members (Qwen2ForCausalLM :890,
        # LlamaForCausalLM :1048, Qwen3ForCausalLM :1206): the delegations `fix` writes on each do it
        "MiniCPMV": FIXABLE,
        "DeepseekV3ForCausalLMNextN": DRAFT,
        # passes language_model_cls=Qwen3MoeLLMModel up, whose forward reads layers_to_capture; no members
        "Qwen3VLMoeForConditionalGeneration": IMPLEMENTABLE,
    },
    "0.5.23": {
        "KimiK25ForConditionalGeneration": SUPPORTED,
        "Qwen3VLForConditionalGeneration": SUPPORTED,
        "Qwen2VLForConditionalGeneration": IMPLEMENTABLE,  # Qwen2Model collects; no members
        "Glm4ForCausalLM": IMPLEMENTABLE,  # Glm4Model collects; no EAGLE-3 setter
        "MixtralForCausalLM": NOT_SUPPORTED,  # MixtralModel never collects
        "Gemma3ForConditionalGeneration": SUPPORTED,
        "LlamaForCausalLMEagle3": DRAFT,
        # Qwen4ExpModel.forward returns (hidden_states, hc_hidden_states) on every non-idle batch
        "Qwen4ExpForConditionalGeneration": NOT_SUPPORTED,
        "Qwen3_5ForConditionalGeneration": SUPPORTED,  # the setter marks the decoder's layers (since 0.5.22)
        "Qwen2ForRewardModel": NOT_APPLICABLE,  # a reward model: no logits processor
        "GPT2LMHeadModel": NOT_SUPPORTED,  # its decoder self.transformer (GPT2Model) collects nothing
        # language_model chosen by llm_config.architectures[0] (internvl.py:546-569): Qwen2, Qwen3,
        # Qwen3Moe and GptOss ForCausalLM have both members, InternLM2ForCausalLM neither
        "InternVLChatModel": DEPENDS,
        # __getattr__ forwards to self.minicpmv, one of MiniCPMV2_6 .. MiniCPMV4_7: none defines the
        # setter; delegations to self.llm make 2.6, 4.0 and 4.5 work, 4.6 and 4.7 still lack
        # get_embed_and_head (tests/test_support_candidates.py has each)
        "MiniCPMV": DEPENDS,
        "MiniCPMV4_6ForConditionalGeneration": DEPENDS,
        "ChatGLMModel": NOT_SUPPORTED,  # self.transformer.encoder (GLMTransformer) never collects; no members
        "CLIPModel": NOT_APPLICABLE,  # text_model read off a CLIPTextModel: CLIPTextTransformer, a pooler only
        "Lfm2BidirectionalModel": NOT_APPLICABLE,  # Lfm2Model's layers, a pooler, forward asserts get_embedding
        # gemma4_mtp.py: forward reads forward_batch.spec_info.hidden_states (the target's); the
        # speculative hook loads them only as drafts (arg_groups/speculative_hook.py:98)
        "Gemma4AssistantForCausalLM": DRAFT,
        "Gemma4UnifiedAssistantForCausalLM": DRAFT,  # adds nothing to Gemma4AssistantForCausalLM
        # dflash.py: a DFlashDraftModel alias; the DFlash worker calls its project_target_hidden
        "MuseGlimmerAssistantModel": DRAFT,
        # transformers.py: TransformersBase.forward calls self.logits_processor(..., forward_batch, None)
        "TransformersForCausalLM": NOT_SUPPORTED,
        "TransformersMoEForCausalLM": NOT_SUPPORTED,
        "TransformersMultiModalForCausalLM": NOT_SUPPORTED,
        "TransformersMultiModalMoEForCausalLM": NOT_SUPPORTED,
        # phi3_small.py: its forward passes four arguments; Phi3SmallModel collects nothing either
        "Phi3SmallForCausalLM": NOT_SUPPORTED,
        # dots3_common/modeling.py: self.thinker.language_model.model is a Dots3Model, whose forward
        # returns hidden_states alone; no class there defines set_eagle3_layers_to_capture
        "Dots3NoteForCausalLM": NOT_SUPPORTED,
        # lfm2_vl.py:166 holds a Lfm2ForCausalLM, nano_nemotron_vl.py:86 a NemotronHForCausalLM; both
        # owners lack the members, which the fix reads off their decoders (EGL040), then delegates to them
        "Lfm2VlForConditionalGeneration": IMPLEMENTABLE,
        "NemotronH_Nano_VL_V2": IMPLEMENTABLE,
        "NemotronH_Omni_Reasoning_V3": IMPLEMENTABLE,
        # gemma3n_mm.py: an owner of self.language_model = Gemma3nTextModel (layers, no head), which collects nothing
        "Gemma3nForConditionalGeneration": NOT_SUPPORTED,
        # kimi_linear.py: KimiLinearModel appends layer i's output after the layer call when i is in
        # self.dspark_layers_to_capture (738-747) and returns the list (760-761); the served forward
        # unpacks under capture_aux_hidden_states and passes it (828-836): EGL040 writes both members
        "KimiLinearForCausalLM": IMPLEMENTABLE,
        # deepseek_v4.py: the same list, captured after the layer in _forward_impl (4559-4573) and
        # before it in _forward_layers_hc_pre_from_prev (4203-4210): EGL041, no one shift serves both
        "DeepseekV4ForCausalLM": IMPLEMENTABLE,
    },
}


@pytest.mark.release
@pytest.mark.parametrize("version", sorted(HAND_CHECKED))
def test_release_rows_match_the_source_read_by_hand(version):
    from fetch_sglang import models_dir

    rows = support_matrix([models_dir(version)], select_interfaces(None))
    assert {e: statuses(rows)[e] for e in HAND_CHECKED[version]} == HAND_CHECKED[version]


def test_a_finding_counts_for_every_pack_that_needs_its_member():
    """eagle and eagle3 both ask for get_embed_and_head: the check names its finding after one
    of them, and the other pack's row must rest on it too, not re-judge the class."""
    rows = support_matrix([TREE], select_interfaces(["all"]))
    row = next(r for r in rows if r.entry == "LonelyForCausalLM" and r.pack == "eagle3")
    assert (row.status, row.codes) == (IMPLEMENTABLE, ("EGL041",))
    written = row.detail.split(" (")[0]  # "write by hand MEMBER, MEMBER (why)"
    assert {"get_embed_and_head", "set_eagle3_layers_to_capture"} <= set(written.replace(",", " ").split())
