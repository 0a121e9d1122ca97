"""Start one served class of SGLang 0.5.23 or 0.5.9 on CPU as an aux-capturing engine and report what it captures.

Run by tests/runtime/test_runtime_capture_families.py (and _0_5_9.py) in the release's runtime venv,
with a copy of the package first on sys.path and SGLANG_USE_CPU_ENGINE=1.
On 0.5.23 the engine is started with `enable_return_aux_hidden_states` and the EAGLE-3
convention (SGLang's capture without a draft), so SGLang's own start-up,
`configure_aux_hidden_state_capture`, calls `set_eagle3_layers_to_capture`
with the given ids, or with None when none are given. 0.5.9 has no such switch: it is
started as an EAGLE-3 engine with a draft (--draft) whose config names the ids or none,
and its `ModelRunner.initialize` makes the call. Then a few decode steps:
the aux hidden states handed to the logits processor are compared with the
residual stream after each layer, read by hooks (the stream entering the next
layer's input norm, or the final norm for the last layer). The class as
released is built beside it to show what it lacks. A mixer whose kernels do
not run on CPU is replaced, where named (--stand-in-mixer), by
standins.stand_in_mixer; nothing else of the model is.

    python probe_capture.py --module glm4 --cls Glm4ForCausalLM --target DIR --layer-ids none|0,2 \
        --unfixed glm4.py --out report.json [--stand-in-mixer Lfm2ShortConv] [--disable-radix-cache] [--draft DIR]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(1, str(Path(__file__).resolve().parent))
# importing the Kimi probe installs the stand-ins (standins.py) before SGLang is imported
import standins
from probe_kimi_k25 import load_with_sentinel, record_calls, server_args, start_runner

MEMBERS = ("set_eagle3_layers_to_capture", "get_embed_and_head")


def embed_and_head(model) -> tuple:
    """The decoder's token embedding (its one VocabParallelEmbedding, whatever it is called) and the head the
    model hands the logits processor."""
    from sglang.srt.layers.vocab_parallel_embedding import VocabParallelEmbedding

    embeds = [m for m in model.model.modules() if type(m) is VocabParallelEmbedding]
    assert len(embeds) == 1, embeds
    return embeds[0].weight, model.lm_head.weight


def capture_state(model) -> dict:
    layers = getattr(model.model, "layers_to_capture", None)
    return {"capture_aux_hidden_states": getattr(model, "capture_aux_hidden_states", None),
            "layers_to_capture": None if layers is None else list(layers)}


def unfixed_report(path: Path, module: str, cls_name: str, model_config, layer_ids) -> dict:
    """The released class, imported from its own file beside the copy: which members it lacks, and what the
    engine's own capture set-up does with it (0.5.23's configure_aux_hidden_state_capture; 0.5.9 calls the member
    inline in ModelRunner.initialize, so there the test starts the release itself)."""
    spec = importlib.util.spec_from_file_location(f"sglang.srt.models._{module}_unfixed", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    model, unloaded = load_with_sentinel(getattr(loaded, cls_name), model_config)
    members = {}
    for name in MEMBERS:
        try:
            getattr(model, name)
            members[name] = None
        except AttributeError as exc:
            members[name] = f"AttributeError: {exc}"
    if importlib.util.find_spec("sglang.srt.model_executor.model_runner_components") is None:  # 0.5.9
        return {"file": loaded.__file__, "members": members, "capture": capture_state(model),
                "unloaded_params": unloaded}
    from sglang.srt.model_executor.model_runner_components.attention_backend_setup import (
        configure_aux_hidden_state_capture,
    )

    try:
        configure_aux_hidden_state_capture(model=model, eagle_use_aux_hidden_state=True,
                                           eagle_aux_hidden_state_layer_ids=layer_ids,
                                           dflash_use_aux_hidden_state=False, dflash_target_layer_ids=None,
                                           is_dspark=False)
        setup_error = None
    except Exception as exc:  # what SGLang's start-up would die of
        setup_error = f"{type(exc).__name__}: {exc}"
    return {"file": loaded.__file__, "members": members, "engine_setup_error": setup_error,
            "capture": capture_state(model), "unloaded_params": unloaded}


def aux_list(aux, hidden: int) -> list:
    """The aux states as one tensor per captured layer (SGLang passes a list, or one packed tensor)."""
    if aux is None:
        return []
    if isinstance(aux, torch.Tensor):
        return list(aux.split(hidden, dim=-1))
    return list(aux)


class StreamReader:
    """The residual stream after each layer step, read where the model itself hands it to a norm.

    A step is one call of a layer: layer i of a stack of L run in loops (`num_loops` of the config, Nanbeige) is
    step loop * L + i, the numbering the engine's ids use for such a model; elsewhere step i is layer i. The output
    of step s is the stream entering the first norm that step s + 1 runs (its input norm), or, after the last step,
    the final norm. A fused add + RMSNorm, called with (x, residual), returns (normed, x + residual); a plain norm,
    called with the stream alone, has it as its input. Each layer's forward, wrapped on the instance, counts the
    steps and arms the reader as a step begins (for the step before it), and after the last step; a forward hook on
    every RMSNorm of the decoder reads the first norm called after that. A norm the decoder runs between two loops
    (Nanbeige's final norm on the folded stream) comes before step s + 1 arms the reader: what step s hands on is
    the stream the next loop's first layer receives, normed.
    """

    def __init__(self, steps: int) -> None:
        self.streams: dict[int, torch.Tensor] = {}
        self.pending: int | None = None
        self.steps = steps
        self.called = 0

    def step(self) -> None:
        if self.called > 0:
            self.pending = self.called - 1
        self.called += 1

    def last(self) -> None:
        if self.called == self.steps:
            self.pending = self.steps - 1

    def read(self, module, args, output) -> None:
        if self.pending is None:
            return
        if isinstance(output, tuple) and len(output) == 2 and output[1] is not None:
            self.streams[self.pending] = output[1].detach().float().clone()
        elif len(args) == 1 and isinstance(output, torch.Tensor):
            self.streams[self.pending] = args[0].detach().float().clone()
        self.pending = None

    def clear(self) -> None:
        self.streams.clear()
        self.called = 0

    def install(self, decoder, layers) -> list:
        from sglang.srt.layers.layernorm import RMSNorm

        for layer in layers:
            self.wrap(layer)
        return [m.register_forward_hook(self.read) for m in decoder.modules() if isinstance(m, RMSNorm)]

    def wrap(self, layer) -> None:
        """Count the layer's calls through its forward, wrapped on the instance: a decoder that calls
        `layer.forward(...)` (Nemotron-H) runs no module hooks, and `layer(...)` reaches the same wrapper."""
        forward = layer.forward

        def counted(*args, **kwargs):
            self.step()
            result = forward(*args, **kwargs)
            self.last()
            return result

        layer.forward = counted


def record_fused_output(layer, streams: dict, key: int) -> None:
    """A layer that runs fused with its neighbours' norms (Beam's `forward_fused`: the previous transition hands
    it its normed input, it returns the next layer's normed input and the new residual stream) calls no norm
    module; its output is the residual it returns. Wrapped on the instance, called unchanged."""
    fused = layer.forward_fused

    def wrapper(*args, **kwargs):
        result = fused(*args, **kwargs)
        streams[key] = result[1].detach().float().clone()
        return result

    layer.forward_fused = wrapper


def decode_and_compare(runner) -> dict:
    from forward_decode import decode_steps

    model = runner.model
    layers = model.model.layers
    hidden = model.config.hidden_size
    steps = len(layers) * getattr(model.config, "num_loops", 1)
    reader = StreamReader(steps)
    streams = reader.streams
    handed: list = []

    def logits_input(module, args, kwargs):
        handed.append(kwargs["aux_hidden_states"] if "aux_hidden_states" in kwargs
                      else args[4] if len(args) > 4 else None)

    hooks = reader.install(model.model, layers)
    hooks.append(model.logits_processor.register_forward_pre_hook(logits_input, with_kwargs=True))
    for i, layer in enumerate(layers):
        if hasattr(layer, "forward_fused"):
            record_fused_output(layer, streams, i)

    def observe(forward_batch, out) -> dict:
        aux = aux_list(handed[-1] if handed else None, hidden)
        record = {"layer_outputs_read": sorted(streams),
                  "aux_count": len(aux), "aux_shapes": [list(a.shape) for a in aux],
                  # for each aux state, the layers whose output it equals exactly
                  "aux_equals_output_of": [[k for k, s in sorted(streams.items())
                                            if a.shape == s.shape and torch.equal(a.float(), s)] for a in aux],
                  "aux_max_diff_to_output_of": [{k: float((a.float() - s).abs().max())
                                                 for k, s in sorted(streams.items()) if a.shape == s.shape}
                                                for a in aux]}
        reader.clear()
        handed.clear()
        return record

    try:
        decoded = decode_steps(runner, observe)
    finally:
        for hook in hooks:
            hook.remove()
    return {"num_layers": len(layers), "layer_steps": steps, "steps": decoded}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", required=True, help="the module under sglang.srt.models, e.g. glm4")
    parser.add_argument("--cls", required=True)
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--layer-ids", required=True, help="comma-separated, or none")
    parser.add_argument("--unfixed", type=Path, required=True)
    parser.add_argument("--draft", type=Path,
                        help="(0.5.9) an EAGLE-3 draft's folder: 0.5.9's ModelRunner reads the aux ids from its "
                             "config; --layer-ids then only says what the test expects")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--stand-in-mixer", action="append", default=[],
                        help="a mixer class of the module whose forward standins.stand_in_mixer replaces, or "
                             "Class.method for the method of a layer that calls its mixer")
    parser.add_argument("--absent-sinks", action="store_true",
                        help="let the torch_native backend take sinks=None (standins.accept_absent_sinks)")
    parser.add_argument("--placeholder-streams", action="store_true",
                        help="let torch.cuda.Stream() be created on CPU (standins.placeholder_cuda_streams)")
    parser.add_argument("--skip-kv-copy-warmup", action="store_true",
                        help="(0.5.9) build the MHA KV pool without its Triton KV-copy warm-up "
                             "(standins.skip_kv_copy_warmup)")
    parser.add_argument("--disable-radix-cache", action="store_true",
                        help="as the server argument; SGLang's Mamba radix cache needs snapshot support on CPU")
    opts = parser.parse_args()
    layer_ids = None if opts.layer_ids == "none" else [int(x) for x in opts.layer_ids.split(",")]
    started = time.monotonic()

    import sglang

    module = importlib.import_module(f"sglang.srt.models.{opts.module}")
    cls = getattr(module, opts.cls)
    if opts.placeholder_streams:
        standins.placeholder_cuda_streams()
    if opts.skip_kv_copy_warmup:
        from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool

        standins.skip_kv_copy_warmup(MHATokenToKVPool)
    if opts.absent_sinks:
        from sglang.srt.layers.attention.torch_native_backend import TorchNativeAttnBackend

        standins.accept_absent_sinks(TorchNativeAttnBackend)
    for mixer in opts.stand_in_mixer:
        owner, _, method = mixer.partition(".")
        standins.stand_in_mixer(getattr(module, owner), method or "forward")
    calls: list = []
    record_calls(cls, MEMBERS, calls)
    extra = {"disable_radix_cache": True} if opts.disable_radix_cache else {}
    if opts.draft is not None:  # 0.5.9: an EAGLE-3 engine, its aux ids named by the draft's config
        args = server_args(opts.target, opts.draft, **extra)
    else:
        args = server_args(opts.target, enable_return_aux_hidden_states=True, speculative_algorithm="EAGLE3",
                           return_aux_hidden_state_layer_ids=layer_ids, **extra)
    report = {"sglang": sglang.__version__, "torch": torch.__version__, "cuda": torch.cuda.is_available(),
              "layer_ids": layer_ids}
    try:
        runner = start_runner(args)
    except Exception as exc:  # the test shows it: an unfixed owner dies here, at the engine's own check
        report["start_error"] = f"{type(exc).__name__}: {exc}"
        report["start_error_where"] = [f"{f.filename.split('/sglang/', 1)[-1]}:{f.lineno} {f.name}"
                                       for f in traceback.extract_tb(exc.__traceback__)][-6:]
        report["calls"] = calls
        opts.out.write_text(json.dumps(report, indent=2))
        return
    model = runner.model
    report |= {"class": f"{type(model).__module__}.{type(model).__qualname__}",
               "class_file": sys.modules[type(model).__module__].__file__,
               "calls": list(calls), "capture": capture_state(model), "start_s": round(time.monotonic() - started, 1)}
    if hasattr(model, "get_embed_and_head"):
        embed, head = model.get_embed_and_head()
        own_embed, own_head = embed_and_head(model)
        report["get_embed_and_head"] = {"embed_is_models": embed is own_embed, "head_is_models": head is own_head,
                                        "embed_shape": list(embed.shape), "head_shape": list(head.shape)}
    report["forward"] = decode_and_compare(runner)
    report["stood_in_calls"] = dict(standins.STOOD_IN_CALLS)
    report["unfixed"] = unfixed_report(opts.unfixed, opts.module, opts.cls, runner.model_config, layer_ids)
    report["wall_s"] = round(time.monotonic() - started, 1)
    opts.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
