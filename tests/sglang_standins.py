"""Stand-ins for torch and the sglang.srt modules SGLang's model files import, so model code in
SGLang's patterns runs without either installed.

Hidden states are plain Python integers: the embedding gives 0 and a decoder layer adds
2**layer_id, so a captured value names exactly the layers that ran before it. The logits
processor records what it is called with. `installed(root)` puts the stand-ins in
sys.modules (sglang.srt.models is read from `root`) and restores sys.modules afterwards.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NUM_LAYERS = 8


def config() -> types.SimpleNamespace:
    text = types.SimpleNamespace(num_hidden_layers=NUM_LAYERS, hidden_size=4, vocab_size=16, rms_norm_eps=1e-6,
                                 tie_word_embeddings=False, intermediate_size=8, num_attention_heads=2)
    return types.SimpleNamespace(**vars(text), text_config=text, thinker_config=types.SimpleNamespace(text_config=text))


class Module:
    """torch.nn.Module: attributes are plain, a call runs forward."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)


class ModuleList(list):
    def __init__(self, modules: Any = ()) -> None:
        super().__init__(modules)


class Embedding(Module):
    def __init__(self, num_embeddings: int = 0, embedding_dim: int = 0, *args: Any, **kwargs: Any) -> None:
        self.weight = ("embedding", num_embeddings, embedding_dim)

    def forward(self, input_ids: Any) -> int:
        return 0


class Linear(Module):
    def __init__(self, in_features: int = 0, out_features: int = 0, *args: Any, **kwargs: Any) -> None:
        self.weight = ("linear", in_features, out_features)

    def forward(self, x: Any) -> Any:
        return x


class Identity(Module):
    def forward(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return x


class PPGroup:
    is_first_rank = True
    is_last_rank = True
    rank_in_group = 0
    world_size = 1


class ForwardMode:
    def is_idle(self) -> bool:
        return False

    def is_extend(self) -> bool:
        return True

    def is_decode(self) -> bool:
        return False


class ForwardBatch:
    def __init__(self) -> None:
        self.forward_mode = ForwardMode()
        self.batch_size = 1


class PPProxyTensors(dict):
    pass


class LogitsProcessor(Module):
    """Records each call (positional and keyword arguments) in CALLS and returns it."""

    def __init__(self, config: Any = None, *args: Any, **kwargs: Any) -> None:
        self.config = config

    def __call__(self, *args: Any, **kwargs: Any) -> tuple[tuple, dict]:
        CALLS.append((args, kwargs))
        return args, kwargs


class LogitsProcessorOutput:
    def __init__(self, **fields: Any) -> None:
        vars(self).update(fields)


CALLS: list[tuple[tuple, dict]] = []


def no_grad() -> Any:
    return lambda fn: fn


def add_prefix(name: str, prefix: str) -> str:
    return name if not prefix else f"{prefix}.{name}"


def make_layers(num_hidden_layers: int, layer_fn: Any, pp_rank: int | None = None, pp_size: int | None = None,
                prefix: str = "", **kwargs: Any) -> tuple[ModuleList, int, int]:
    layers = ModuleList(layer_fn(idx=i, prefix=add_prefix(str(i), prefix)) for i in range(num_hidden_layers))
    return layers, 0, num_hidden_layers


def _module(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    vars(module).update(attrs)
    return module


def standins(root: Path) -> dict[str, types.ModuleType]:
    """Every module the fixtures import, by name; sglang and sglang.srt are packages read from root."""
    nn = _module("torch.nn", Module=Module, ModuleList=ModuleList, Embedding=Embedding, Linear=Linear,
                 Identity=Identity)
    torch = _module("torch", nn=nn, Tensor=object, no_grad=no_grad)
    sglang = _module("sglang", __path__=[str(root / "sglang")])
    srt = _module("sglang.srt", __path__=[str(root / "sglang" / "srt")])
    layers = _module("sglang.srt.layers", __path__=[])
    executor = _module("sglang.srt.model_executor", __path__=[])
    return {
        "torch": torch,
        "torch.nn": nn,
        "sglang": sglang,
        "sglang.srt": srt,
        "sglang.srt.distributed": _module("sglang.srt.distributed", get_pp_group=PPGroup),
        "sglang.srt.layers": layers,
        "sglang.srt.layers.logits_processor": _module("sglang.srt.layers.logits_processor",
                                                      LogitsProcessor=LogitsProcessor,
                                                      LogitsProcessorOutput=LogitsProcessorOutput),
        "sglang.srt.layers.layernorm": _module("sglang.srt.layers.layernorm", RMSNorm=Identity),
        "sglang.srt.layers.vocab_parallel_embedding": _module("sglang.srt.layers.vocab_parallel_embedding",
                                                              ParallelLMHead=Linear, VocabParallelEmbedding=Embedding),
        "sglang.srt.model_executor": executor,
        "sglang.srt.model_executor.forward_batch_info": _module("sglang.srt.model_executor.forward_batch_info",
                                                                ForwardBatch=ForwardBatch,
                                                                PPProxyTensors=PPProxyTensors),
        "sglang.srt.utils": _module("sglang.srt.utils", add_prefix=add_prefix, make_layers=make_layers),
    }


def is_standin(obj: object) -> bool:
    """Whether obj is one of this module's stand-ins (an attribute missing on it is a harness gap)."""
    return type(obj).__module__ == __name__ or isinstance(obj, types.ModuleType) and obj.__name__ in _NAMES


_NAMES: set[str] = set()


@contextlib.contextmanager
def installed(root: Path) -> Iterator[None]:
    """The stand-ins in sys.modules while the block runs; afterwards sys.modules holds again
    exactly what it held for torch and sglang (nothing, where nothing was there)."""
    modules = standins(root)
    _NAMES.update(modules)
    ours = lambda name: name.split(".")[0] in ("torch", "sglang")  # noqa: E731
    saved = {name: module for name, module in sys.modules.items() if ours(name)}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name in [name for name in sys.modules if ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
