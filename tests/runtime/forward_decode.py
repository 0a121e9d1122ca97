"""A forward pass of the built model on CPU, through SGLang's own batch and runner code.

Why decode steps and not a prefill: for a DeepSeek (MLA) model SGLang routes a
prefill without cached prefix to its MHA path, which hands the attention backend
full-width keys and values (qk 24, v 16 here); the only CPU backend without
sgl_kernel's CPU kernels, torch_native, ignores them and reads the latent MLA
cache (kv_lora_rank + rope = 40) instead, and fails ("Expected size for first two
dimensions of batch2 tensor to be: [4, 24] but got: [4, 40]"). Decode steps take the
MLA (absorbed) path that torch_native serves. So the request starts as a one-token
prompt whose slot is allocated by `prepare_for_extend` but not computed (its latent
cache entry stays zero), and every later token is a real decode step.
"""

from __future__ import annotations

from array import array
from types import SimpleNamespace

import torch

TOKENS = [5, 6, 7, 8]


class _NoPrefixCache(SimpleNamespace):
    """The tree-cache surface ScheduleBatch asks about; SGLang's bench_one_batch uses the same."""

    def supports_swa(self) -> bool:
        return False

    def supports_mamba(self) -> bool:
        return False

    def is_chunk_cache(self) -> bool:
        return False

    def is_tree_cache(self) -> bool:
        return True

    def supports_prefix_sharing(self) -> bool:  # the 0.5.23 surface from here on
        return True

    def evict(self, params) -> None:
        pass

    def maybe_hand_to_session(self, req) -> None:
        pass


def _max_diff(aux, stream) -> float | None:
    if aux is None or aux.shape != stream.shape:
        return None
    return float((aux.float() - stream).abs().max())


@torch.no_grad()
def decode_steps(runner, observe) -> list[dict]:
    """Decode TOKENS[1:] one step at a time through SGLang's batch code; `observe(forward_batch, logits_output)`
    gives each step's record."""
    from sglang.srt.managers.schedule_batch import Req, ScheduleBatch
    from sglang.srt.model_executor.forward_batch_info import ForwardBatch
    from sglang.srt.sampling.sampling_params import SamplingParams
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    legacy = hasattr(Req, "set_extend_input_len")  # 0.5.9; 0.5.23 keeps token ids in int64 arrays
    req = Req(rid="probe", origin_input_text="", origin_input_ids=TOKENS[:1] if legacy else array("q", TOKENS[:1]),
              sampling_params=SamplingParams(temperature=0, max_new_tokens=len(TOKENS)), return_hidden_states=True)
    req.logprob_start_len = -1
    if legacy:  # as 0.5.9's bench_one_batch.py
        req.fill_ids = req.origin_input_ids
        req.set_extend_input_len(len(req.fill_ids) - len(req.prefix_indices))
        page_size = runner.server_args.page_size
    else:  # as 0.5.17's and 0.5.23's benchmark/one_batch.py; the page size is resolved into the published config
        from sglang.srt.runtime_context import get_schedule

        req.full_untruncated_fill_ids = req.origin_input_ids
        if hasattr(req, "set_extend_range"):  # 0.5.17
            req.set_extend_range(len(req.prefix_indices), len(req.origin_input_ids))
        else:
            req.extend_end = len(req.origin_input_ids)
        page_size = get_schedule().page_size
    cache = _NoPrefixCache(page_size=page_size, device=runner.device,
                           token_to_kv_pool_allocator=runner.token_to_kv_pool_allocator)
    batch = ScheduleBatch.init_new(reqs=[req], req_to_token_pool=runner.req_to_token_pool,
                                   token_to_kv_pool_allocator=runner.token_to_kv_pool_allocator, tree_cache=cache,
                                   model_config=runner.model_config, enable_overlap=False,
                                   spec_algorithm=SpeculativeAlgorithm.NONE)
    batch.prepare_for_extend()
    steps = []
    for token in TOKENS[1:]:
        if legacy:
            batch.output_ids = torch.tensor([token], dtype=torch.int64)
            batch.prepare_for_decode()
            forward_batch = ForwardBatch.init_new(batch.get_model_worker_batch(), runner)
        else:  # 0.5.17 and 0.5.23: the batch goes to the runner directly
            batch.input_ids = torch.tensor([token], dtype=torch.int64)
            batch.prepare_for_decode()
            forward_batch = ForwardBatch.init_new(batch, runner, return_hidden_states_before_norm=False)
        out = runner.forward(forward_batch).logits_output
        steps.append({"token": token, "mode": forward_batch.forward_mode.name,
                      "capture_hidden_mode": forward_batch.capture_hidden_mode.name,
                      "logits_shape": list(out.next_token_logits.shape),
                      "logits_finite": bool(torch.isfinite(out.next_token_logits).all()),
                      "argmax": int(out.next_token_logits.argmax(-1)[0]), **observe(forward_batch, out)})
        for r in batch.reqs:
            r.output_ids.append(token)
    return steps


def residual_stream_hook(streams: dict, key):
    """A forward hook on a fused add + RMSNorm, which returns (normed, x + residual): it keeps x + residual,
    the residual stream entering the norm, under `key`."""
    def hook(module, args, output):
        if isinstance(output, tuple) and len(output) == 2 and output[1] is not None:
            streams[key] = output[1].detach().float().clone()
    return hook


@torch.no_grad()
def decode_with_aux(runner, capture_layer: int) -> dict:
    streams: dict[int, torch.Tensor] = {}

    def observe(forward_batch, out) -> dict:
        aux = out.hidden_states
        record = {"aux_shape": None if aux is None else list(aux.shape),
                  "aux_diff_to_stream_into_layer": {i: _max_diff(aux, x) for i, x in sorted(streams.items())}}
        streams.clear()
        return record

    layers = runner.model.language_model.model.layers
    hooks = [layer.input_layernorm.register_forward_hook(residual_stream_hook(streams, i))
             for i, layer in enumerate(layers)]
    try:
        steps = decode_steps(runner, observe)
    finally:
        for hook in hooks:
            hook.remove()
    return {"capture_layer": capture_layer, "num_layers": len(layers), "steps": steps}
