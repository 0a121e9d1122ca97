"""`eaglelint support --config`: one checkpoint's verdict on SGLang 0.5.23, each expectation read
off SGLang's source (file:line in the comments, under sglang/srt/)."""

import json
import subprocess
import sys

import pytest

from eaglelint.packs import select_interfaces
from eaglelint.pipeline.checkpoint import AFTER_FIX, EXIT_CODES, FAILS, UNDECIDED, WORKS, checkpoint_verdicts

VERSION = "0.5.23"

CASES = {
    # models/llama.py:929 and :892: LlamaForCausalLM has both members itself
    "llama": ({"architectures": ["LlamaForCausalLM"]}, WORKS, None, None),
    # models/qwen3_vl.py:1777 and :1774: Qwen3VLForConditionalGeneration writes both members
    "qwen3_vl": ({"architectures": ["Qwen3VLForConditionalGeneration"]}, WORKS, None, None),
    # models/llava.py:779 asks the registry for AutoModelForCausalLM's class of the text config
    # (llava.py:661-681): model type llama is LlamaForCausalLM (supported), and llava.py has no
    # set_eagle3_layers_to_capture (only get_embed_and_head, :465): a delegation to write
    "llava_llama": ({"architectures": ["LlavaForConditionalGeneration"], "text_config": {"model_type": "llama"}},
                    AFTER_FIX, "LlamaForCausalLM", "EGL001"),
    # model type olmo is OlmoForCausalLM (models/olmo.py): no members, OlmoModel.forward collects nothing
    "llava_olmo": ({"architectures": ["LlavaForConditionalGeneration"], "text_config": {"model_type": "olmo"}},
                   FAILS, "OlmoForCausalLM", "EGL001"),
    # models/internvl.py:550-553: InternLM2ForCausalLM, which has no capture member (internlm2.py)
    "internvl_internlm2": ({"architectures": ["InternVLChatModel"],
                            "llm_config": {"architectures": ["InternLM2ForCausalLM"]}}, FAILS, "InternLM2ForCausalLM",
                           "EGL001"),
    # models/internvl.py:546-549: Qwen2ForCausalLM (qwen2.py:781 has the capture member); the
    # wrapper lacks both members: delegations
    "internvl_qwen2": ({"architectures": ["InternVLChatModel"],
                        "llm_config": {"architectures": ["Qwen2ForCausalLM"]}}, AFTER_FIX, "Qwen2ForCausalLM",
                       "EGL001"),
    # models/internvl.py:566-569: any other name raises NotImplementedError
    "internvl_llama": ({"architectures": ["InternVLChatModel"],
                        "llm_config": {"architectures": ["LlamaForCausalLM"]}}, FAILS, None, None),
    # models/internvl.py:546 reads config.llm_config: the config does not say
    "internvl_no_llm_config": ({"architectures": ["InternVLChatModel"]}, UNDECIDED, None, None),
    # models/deepseek_vl2.py:215-220: use_mla picks DeepseekV2ForCausalLM, else DeepseekForCausalLM
    "deepseek_vl2_mla": ({"architectures": ["DeepseekVL2ForCausalLM"], "language_config": {"use_mla": True}},
                         AFTER_FIX, "DeepseekV2ForCausalLM", "EGL001"),
    "deepseek_vl2_dense": ({"architectures": ["DeepseekVL2ForCausalLM"], "language_config": {"use_mla": False}},
                           FAILS, "DeepseekForCausalLM", "EGL001"),
    # models/registry.py: no EntryClass lists it; model_loader/utils.py:226-231 falls back to the
    # Transformers backend (models/transformers.py), whose classes have no capture member
    "unregistered": ({"architectures": ["NoSuchModelForCausalLM"]}, FAILS, None, None),
    # model_loader/utils.py:201 reads architectures: the config does not say
    "no_architectures": ({"model_type": "llama"}, UNDECIDED, None, None),
    # models/minicpmv.py:1741-1750: model_type minicpmv4_6 is version (4, 6) (_MODEL_TYPE_VERSIONS, :580),
    # _SUPPORT_VERSION[(4, 6)] is MiniCPMV4_6 (:1701), whose llm (Qwen3.5, :1438-1443) has the capture
    # member but nothing writes get_embed_and_head on MiniCPMV4_6: not supported even after the fix
    "minicpmv_4_6": ({"architectures": ["MiniCPMV"], "model_type": "minicpmv4_6", "version": "4.6"}, FAILS,
                     "MiniCPMV4_6", "EGL001"),
    # a numeric version 2.6: MiniCPMV2_6 (:1698), whose llm is a Qwen2ForCausalLM (:902): delegations
    "minicpmv_2_6": ({"architectures": ["MiniCPMV"], "model_type": "minicpmv", "version": 2.6}, AFTER_FIX,
                     "MiniCPMV2_6", "EGL001"),
    # llava.py:783: model type qwen2 is Qwen2ForCausalLM (qwen2.py:781 has the capture member): delegations
    "llava_qwen2": ({"architectures": ["LlavaForConditionalGeneration"], "text_config": {"model_type": "qwen2"}},
                    AFTER_FIX, "Qwen2ForCausalLM", "EGL001"),
    # models/kimi_k25.py:928 and :965: both members, delegating to its DeepseekV3 language model
    "kimi_k25": ({"architectures": ["KimiK25ForConditionalGeneration"]}, WORKS, None, None),
    # models/gemma3_causal.py:1031: EmbeddingGemmaModel.forward asserts get_embedding: it cannot generate
    "embedding_gemma": ({"architectures": ["EmbeddingGemmaModel"]}, FAILS, None, None),
    # no version and no 4.6+ model_type: the legacy default (2, 6) (:1744-1745)
    "minicpmv_no_version": ({"architectures": ["MiniCPMV"], "model_type": "minicpmv"}, AFTER_FIX, "MiniCPMV2_6",
                            "EGL001"),
}


@pytest.fixture(scope="module")
def models():
    from fetch_sglang import models_dir

    return models_dir(VERSION)


@pytest.mark.release
@pytest.mark.parametrize("case", sorted(CASES))
def test_checkpoint_verdict_matches_the_source(models, case):
    config, status, held, code = CASES[case]
    (verdict,) = checkpoint_verdicts([models], select_interfaces(None), config)
    assert verdict.status == status, verdict.reason
    # the language model the served class builds for this config (None: one whatever the config)
    assert (verdict.pick.cls.qualname if verdict.pick and verdict.pick.cls else None) == held
    if code is not None:
        assert code in {f.code for f in verdict.findings}


def eaglelint(*args):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True)


@pytest.mark.release
def test_command_exit_codes_and_json(models, tmp_path):
    folder = tmp_path / "checkpoint"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(CASES["internvl_qwen2"][0]))
    done = eaglelint("support", "--config", folder, "--output-format", "json", models)
    assert done.returncode == EXIT_CODES[AFTER_FIX] == 3, done.stderr
    (out,) = json.loads(done.stdout)
    assert (out["class"], out["held"]["class"], out["held"]["key"], out["codes"]) == \
        ("InternVLChatModel", "Qwen2ForCausalLM", "llm_config.architectures[0]", ["EGL001"])
    assert eaglelint("support", "--arch", "LlamaForCausalLM", models).returncode == 0
    (tmp_path / "olmo.json").write_text(json.dumps(CASES["llava_olmo"][0]))
    assert eaglelint("support", "--config", tmp_path / "olmo.json", models).returncode == 1
    (tmp_path / "ivl.json").write_text(json.dumps(CASES["internvl_no_llm_config"][0]))
    assert eaglelint("support", "--config", tmp_path / "ivl.json", models).returncode == 4


@pytest.mark.parametrize("text", ['{"architectures": [', "[1, 2]", "\udcff"])
def test_unreadable_config_is_one_line_exit_2(tmp_path, text):
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    done = eaglelint("support", "--config", tmp_path, tmp_path)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert str(path) in done.stderr and "internal error" not in done.stderr
