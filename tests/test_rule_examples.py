"""Every rule's documented bad and good examples (rules/codes.toml, `eaglelint rule CODE`) run.

The bad example must be flagged with its code; the good one must not be, and must have
been analysed (no EGL010/EGL999 in its place). Each example is written into a package
laid out as SGLang's (or vLLM's) models, next to stub language models written here
that provide every interface member; a snippet that is not a whole class goes into
the entry's `example_context` where it says `{example}`.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.packs import load_codes

CODES = [c for c in load_codes().values() if c.bad and c.good]
NOT_ANALYSED = {"EGL010", "EGL999"}

SGLANG_STUBS = '''
class LogitsProcessor:
    def __init__(self, config):
        self.config = config


class _EagleLM:
    def __init__(self, *args, **kwargs):
        self.capture_aux_hidden_states = False

    def set_eagle3_layers_to_capture(self, layer_ids=None):
        self.capture_aux_hidden_states = True

    def get_embed_and_head(self):
        return self.embed, self.head

    def set_embed_and_head(self, embed, head):
        self.embed, self.head = embed, head

    @property
    def start_layer(self):
        return 0

    @property
    def end_layer(self):
        return 1


class DeepseekV3ForCausalLM(_EagleLM):
    pass


class LlamaForCausalLM(_EagleLM):
    pass


class Qwen2ForCausalLM(_EagleLM):
    pass


class Gemma4TextModel:
    """A bare decoder: no LM head, no logits processor."""

    def set_eagle3_layers_to_capture(self, layer_ids=None):
        self.layers_to_capture = layer_ids
'''
SGLANG_PRELUDE = ("from typing import List, Optional\n\nfrom torch import nn\n\n"
                  "from sglang.srt.models.stub_models import *  # noqa: F403\n\n\n")
VLLM_STUBS = '''
from torch import nn

from .interfaces import EagleModelMixin, SupportsEagle3


class GraniteModel(nn.Module, EagleModelMixin):
    def forward(self, input_ids, positions, intermediate_tensors=None, inputs_embeds=None):
        aux_hidden_states = []
        for idx, layer in enumerate(self.layers):
            aux_hidden_states = self._maybe_add_hidden_state(aux_hidden_states, idx, input_ids, None)
        if len(aux_hidden_states) > 0:
            return input_ids, aux_hidden_states
        return input_ids


class Qwen2ForCausalLM(nn.Module, SupportsEagle3):
    def __init__(self, *, vllm_config, prefix=""):
        super().__init__()
        self.model = GraniteModel()
'''
VLLM_PRELUDE = ("from torch import nn\n\nfrom .interfaces import *  # noqa: F403\n"
                "from .stub_models import *  # noqa: F403\n\n\n")
VLLM_INTERFACES = (FIXTURES / "check/vllm/model_executor/models/interfaces.py").read_text() + '''

@runtime_checkable
class SupportsPP(Protocol):
    supports_pp: ClassVar[Literal[True]] = True


@runtime_checkable
class SupportsLoRA(Protocol):
    supports_lora: ClassVar[Literal[True]] = True
'''


def example_file(rule, which: str) -> str:
    snippet = getattr(rule, which)
    if rule.example_context:
        lines = []
        for line in rule.example_context.splitlines():
            if line.strip() == "{example}":
                lines.append(textwrap.indent(snippet, line[: line.index("{")]))
            else:
                lines.append(line)
        snippet = "\n".join(lines)
    return snippet + "\n"


def findings_for(rule, which: str, tmp_path: Path, fixed: bool = False) -> list[dict]:
    """The findings of the example file; with `fixed`, after `eaglelint fix --write` on it first."""
    vllm = rule.example_interface == "vllm"
    models = tmp_path / ("vllm/model_executor/models" if vllm else "sglang/srt/models")
    models.mkdir(parents=True)
    if vllm:
        (models / "interfaces.py").write_text(VLLM_INTERFACES)
    (models / "stub_models.py").write_text(VLLM_STUBS if vllm else SGLANG_STUBS)
    example = models / "example.py"
    example.write_text((VLLM_PRELUDE if vllm else SGLANG_PRELUDE) + example_file(rule, which))
    args = ["check", "--isolated", "--no-cache", "--report-unused-suppressions", "--output-format", "json"]
    if rule.example_interface:
        args += ["--interface", rule.example_interface]
    if fixed:
        fix = ["fix", "--write", "--isolated", "--no-cache"] + (["--interface", rule.example_interface]
                                                                 if rule.example_interface else [])
        done = subprocess.run([sys.executable, "-m", "eaglelint", *fix, str(example)], capture_output=True, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
        assert done.returncode in (0, 1), done.stderr
    done = subprocess.run([sys.executable, "-m", "eaglelint", *args, str(models)], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert done.returncode in (0, 1), done.stderr
    return [f for f in json.loads(done.stdout) if Path(f["path"]).name == "example.py"]


@pytest.mark.parametrize("rule", CODES, ids=lambda r: r.code)
def test_documented_bad_example_is_flagged_with_its_code(rule, tmp_path):
    assert rule.code in {f["code"] for f in findings_for(rule, "bad", tmp_path)}


@pytest.mark.parametrize("rule", CODES, ids=lambda r: r.code)
def test_documented_good_example_is_clean_of_its_code_and_analysed(rule, tmp_path):
    codes = {f["code"] for f in findings_for(rule, "good", tmp_path)}
    assert rule.code not in codes and not codes & NOT_ANALYSED, codes


@pytest.mark.parametrize("rule", [c for c in CODES if c.fixable], ids=lambda r: r.code)
def test_the_fix_of_the_bad_example_leaves_no_finding_of_its_code(rule, tmp_path):
    """Fixit's check: `eaglelint fix --write` on the documented bad example, then `check`."""
    before = {f["code"] for f in findings_for(rule, "bad", tmp_path / "before")}
    assert rule.code in before
    after = {f["code"] for f in findings_for(rule, "bad", tmp_path / "after", fixed=True)}
    assert rule.code not in after, after


def test_every_rule_documents_both_examples():
    assert {c.code for c in CODES} == set(load_codes())


def test_rule_command_says_what_the_guard_style_masks():
    done = subprocess.run([sys.executable, "-m", "eaglelint", "rule", "EGL001"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
    assert done.returncode == 0
    assert "--style guard" in done.stdout and "masks the missing capture hook" in done.stdout
