"""Record the width of the hidden states entering SGLang's EAGLE-3 draft model; print one marker per forward.

Why: with the target's aux capture off (a missing or no-op
set_eagle3_layers_to_capture), SGLang hands the draft the target's final hidden
state, `llama_eagle3.LlamaModel.forward` skips its `fc` because the widths
match, and the engine decodes as if nothing were wrong. What tells the two
apart is the width the draft receives: the concatenated aux states of the
captured layers (3 x hidden for three layers) or one hidden state. The engine
runs with CUDA graphs off, so this Python forward runs at every draft step.

Loaded by sitecustomize.py beside it in every process of the engine (SGLang
spawns its scheduler), it wraps the class when SGLang imports the module and
changes nothing else: the wrapped forward gets the same arguments and its
result is returned untouched.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import sys

MARK = "EAGLELINT_DRAFT_INPUT "
MODULE = "sglang.srt.models.llama_eagle3"
CLASS = "LlamaModel"  # the draft's inner model: reads forward_batch.spec_info.hidden_states
MAX_MARKS = 200  # 24 tokens take a few dozen draft forwards; a runaway loop must not flood the log


def record(model, forward_batch) -> dict:
    """What entered the draft: the spec_info hidden states' shape, the forward mode, the widths of fc and embedding."""
    hidden = getattr(getattr(forward_batch, "spec_info", None), "hidden_states", None)
    mode = getattr(forward_batch, "forward_mode", None)
    fc = getattr(model, "fc", None)
    embed = getattr(model, "embed_tokens", None)
    return {"mode": getattr(mode, "name", str(mode)),
            "width": int(hidden.shape[-1]) if hidden is not None else None,
            "rows": int(hidden.shape[0]) if hidden is not None and hidden.dim() > 1 else None,
            "fc_in": getattr(fc, "in_features", None), "embed_dim": getattr(embed, "embedding_dim", None)}


def wrap(cls) -> None:
    """Wrap cls.forward(self, input_ids, positions, forward_batch, ...) once, to print a marker before each call."""
    if getattr(cls.forward, "_eaglelint_probe", False):
        return
    original = cls.forward
    count = [0]

    def forward(self, input_ids, positions, forward_batch, *args, **kwargs):
        if count[0] < MAX_MARKS:
            count[0] += 1
            print(MARK + json.dumps(record(self, forward_batch)), flush=True)
        return original(self, input_ids, positions, forward_batch, *args, **kwargs)

    forward._eaglelint_probe = True
    forward.__wrapped__ = original
    cls.forward = forward


class _WrapOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `MODULE` through the other finders, runs it, then wraps its class."""

    def __init__(self, module: str = MODULE, cls: str = CLASS):
        self.module, self.cls, self._inner = module, cls, None

    def find_spec(self, name, path, target=None):
        if name != self.module:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        self._inner = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module) -> None:
        self._inner.exec_module(module)
        wrap(getattr(module, self.cls))


def install(module: str = MODULE, cls: str = CLASS) -> None:
    """Wrap the class now if its module is loaded, else when it is imported."""
    if module in sys.modules:
        wrap(getattr(sys.modules[module], cls))
    elif not any(isinstance(f, _WrapOnImport) and f.module == module for f in sys.meta_path):
        sys.meta_path.insert(0, _WrapOnImport(module, cls))


def read_marks(text: str) -> list[dict]:
    """Every marker in a log, in order; lines that are not markers (or are cut off) are skipped."""
    marks = []
    for line in text.splitlines():
        at = line.find(MARK)
        if at < 0:
            continue
        try:
            marks.append(json.loads(line[at + len(MARK):]))
        except json.JSONDecodeError:
            continue
    return marks
