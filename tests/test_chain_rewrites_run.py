"""The rewrites of tests/chain_rewrites.py keep what the code does: each is applied to small
served models in SGLang's capture patterns, and the models are run before and after.

The metamorphic tests (test_chain_metamorphic.py) rest on every rewrite keeping behaviour;
these models let Python say so. Each is plain Python (no torch): a decoder whose layers
double the hidden state and add their index, so each captured state names its layer; a served
model that unpacks the decoder's tuple under its flag and hands the aux states to a stand-in
of the engine's LogitsProcessor, whose `forward` has the engine's signature (input_ids,
hidden_states, lm_head, logits_metadata, aux_hidden_states=None, ...) and returns what it got.
The engine's calls are run on fresh instances: no call, a list of ids, a list of one id, None.
A call that raises is the same behaviour where it raises the same way on both sides.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from chain_rewrites import REWRITES, Models, roles

LOGITS = '''
class LogitsProcessor:
    def __init__(self, config):
        self.config = config
    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)
    def forward(self, input_ids, hidden_states, lm_head, logits_metadata, aux_hidden_states=None,
                hidden_states_before_norm=None):
        return (input_ids, hidden_states, lm_head, logits_metadata, aux_hidden_states, hidden_states_before_norm)
'''

COMMON = '''
from typing import List, Optional
from sglang.srt.layers.logits_processor import LogitsProcessor

class PP:
    is_last_rank = True

class Config:
    num_hidden_layers = 8

class Layer:
    def __init__(self, k):
        self.k = k
    def __call__(self, positions, hidden_states, forward_batch, residual, captured_last_layer_outputs=None):
        if captured_last_layer_outputs is not None:
            captured_last_layer_outputs.append(hidden_states + residual)
        return hidden_states * 2 + self.k, residual + 1
'''

TOY_IF = COMMON + '''
class ToyModel:
    def __init__(self, config):
        self.config = config
        self.pp_group = PP()
        self.layers = [Layer(k) for k in range(config.num_hidden_layers)]
        self.start_layer, self.end_layer = 0, config.num_hidden_layers
        self.layers_to_capture = []

    def forward(self, input_ids, positions, forward_batch):
        hidden_states, residual = input_ids, 0
        aux_hidden_states = []
        for i in range(self.start_layer, self.end_layer):
            if i in self.layers_to_capture:
                aux_hidden_states.append(hidden_states + residual)
            layer = self.layers[i]
            hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)
        hidden_states = hidden_states + residual
        if len(aux_hidden_states) == 0:
            return hidden_states
        return hidden_states, aux_hidden_states

    __call__ = forward


class ToyForCausalLM:
    def __init__(self, config):
        self.config = config
        self.pp_group = PP()
        self.model = ToyModel(config)
        self.lm_head = "head"
        self.logits_processor = LogitsProcessor(config)
        self.capture_aux_hidden_states = False

    def forward(self, input_ids, positions, forward_batch):
        hidden_states = self.model(input_ids, positions, forward_batch)
        aux_hidden_states = None
        if self.capture_aux_hidden_states:
            hidden_states, aux_hidden_states = hidden_states
        return self.logits_processor(input_ids, hidden_states, self.lm_head, forward_batch, aux_hidden_states)

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        if not self.pp_group.is_last_rank:
            return
        if layer_ids is None:
            self.capture_aux_hidden_states = True
            num_layers = self.config.num_hidden_layers
            self.model.layers_to_capture = [2, num_layers // 2, num_layers - 3]
        else:
            self.capture_aux_hidden_states = True
            self.model.layers_to_capture = [val + 1 for val in layer_ids]
'''

# the capture target handed to the layer by a conditional expression, a per-layer flag, a setter
# that delegates
TOY_IFEXP = COMMON + '''
class ToyModel:
    def __init__(self, config):
        self.config = config
        self.pp_group = PP()
        self.layers = [Layer(k) for k in range(config.num_hidden_layers)]
        self.start_layer, self.end_layer = 0, config.num_hidden_layers
        self.layers_to_capture = []

    def set_eagle3_layers_to_capture(self, layers_to_capture: List[int]):
        self.layers_to_capture = layers_to_capture
        for layer_id in self.layers_to_capture:
            setattr(self.layers[layer_id], "_is_layer_to_capture", True)

    def forward(self, input_ids, positions, forward_batch):
        hidden_states, residual = input_ids, 0
        aux_hidden_states = []
        for layer_idx, layer in enumerate(self.layers[self.start_layer:self.end_layer]):
            layer_idx = layer_idx + self.start_layer
            hidden_states, residual = layer(
                positions, hidden_states, forward_batch, residual,
                captured_last_layer_outputs=aux_hidden_states if layer_idx in self.layers_to_capture else None,
            )
            hidden_states, residual = layer(
                positions, hidden_states, forward_batch, residual,
                captured_last_layer_outputs=(
                    aux_hidden_states if getattr(layer, "_is_layer_to_capture", False) else None
                ),
            )
        if len(aux_hidden_states) == 0:
            return hidden_states
        return hidden_states, aux_hidden_states

    __call__ = forward


class ToyForCausalLM:
    def __init__(self, config):
        self.config = config
        self.pp_group = PP()
        self.model = ToyModel(config)
        self.lm_head = "head"
        self.logits_processor = LogitsProcessor(config)
        self.capture_aux_hidden_states = False

    def forward(self, input_ids, positions, forward_batch):
        hidden_states = self.model(input_ids, positions, forward_batch)
        aux_hidden_states = None
        if self.capture_aux_hidden_states:
            hidden_states, aux_hidden_states = hidden_states
        return self.logits_processor(input_ids, hidden_states, self.lm_head, forward_batch, aux_hidden_states)

    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        if not self.pp_group.is_last_rank:
            return
        self.capture_aux_hidden_states = True
        if layer_ids is None:
            num_layers = self.config.num_hidden_layers
            self.model.set_eagle3_layers_to_capture([2, num_layers // 2, num_layers - 3])
        else:
            self.model.set_eagle3_layers_to_capture([val + 1 for val in layer_ids])
'''


TOYS = {"if_statement": TOY_IF, "handed_target": TOY_IFEXP}
CALLS = ("no call", [0, 3], [5], None)


def package(base: Path, text: str) -> Path:
    models = base / "sglang" / "srt" / "models"
    layers = base / "sglang" / "srt" / "layers"
    models.mkdir(parents=True)
    layers.mkdir(parents=True)
    for d in (base / "sglang", base / "sglang" / "srt", models, layers):
        (d / "__init__.py").write_text("")
    (layers / "logits_processor.py").write_text(LOGITS)
    (models / "toy.py").write_text(text)
    return models


def behaviour(base: Path, files: dict[Path, str]) -> list:
    """What each engine call on a fresh model does, with `files` written over the package."""
    saved = {p: p.read_text() if p.exists() else None for p in files}
    kept = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "sglang" or m.startswith("sglang.")}
    sys.path.insert(0, str(base))
    try:
        for p, text in files.items():
            p.write_text(text)
        module = importlib.import_module("sglang.srt.models.toy")
        out = []
        for ids in CALLS:
            served = module.ToyForCausalLM(module.Config())
            if ids != "no call":
                served.set_eagle3_layers_to_capture(ids)
            try:
                result = served.forward(1.0, None, "batch")
            except Exception as e:  # the same failure on both sides is the same behaviour
                result = type(e).__name__
            out.append((ids, result, served.capture_aux_hidden_states, list(served.model.layers_to_capture),
                        [getattr(layer, "_is_layer_to_capture", False) for layer in served.model.layers]))
        return out
    finally:
        sys.path.remove(str(base))
        for m in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
            del sys.modules[m]
        sys.modules.update(kept)
        for p, text in saved.items():
            if text is None:
                p.unlink()
            else:
                p.write_text(text)


def rewritten(tmp_path: Path, toy: str) -> tuple[Path, dict[str, dict[Path, str]]]:
    models = package(tmp_path, TOYS[toy])
    found = roles(Models(models), models / "toy.py", "ToyForCausalLM")
    assert found.decoder_forward and found.aux and found.flag and found.served_forward
    cases = {kind: rewrite(Models(models), found) for kind, rewrite in REWRITES.items()}
    return tmp_path, {kind: files for kind, files in cases.items() if files is not None}


@pytest.mark.parametrize("toy", list(TOYS))
def test_each_rewrite_keeps_what_the_model_does(tmp_path, toy):
    base, cases = rewritten(tmp_path, toy)
    before = behaviour(base, {})
    assert any(isinstance(r[1], tuple) and r[1][4] for r in before)  # something reaches the logits processor
    changed = [kind for kind, files in cases.items() if behaviour(base, files) != before]
    assert len(cases) >= 20 and changed == []


def test_every_rewrite_is_run_on_some_model(tmp_path):
    applied: set[str] = set()
    for toy in TOYS:
        applied |= set(rewritten(tmp_path / toy, toy)[1])
    assert applied == set(REWRITES)
