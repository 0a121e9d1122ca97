"""Build the tiny Kimi-K2.5 inside real SGLang on CPU and report what its EAGLE-3 methods do.

Run by tests/runtime in the runtime venv, with the (fixed) sglang copy first on
sys.path and SGLANG_USE_CPU_ENGINE=1. It sets SGLang up as its scheduler does
(server args, MoE config, then ModelRunner: gloo init with world size 1, model
parallel, DP attention, weight loading through SGLang's own ModelConfig and
loader), and writes one JSON object of observations; the test asserts on them.

    python probe_kimi_k25.py --target DIR --draft DIR --unfixed kimi_k25.py --out report.json [--forward]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import socket
import sys
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))
import standins

standins.install()

import torch  # noqa: E402

EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_args(target: Path, draft: Path | None = None, **extra):
    """As the engine would set them; with `draft`, for EAGLE-3, so that SGLang itself sets up aux capture;
    `extra` for other server arguments."""
    from sglang.srt.server_args import ServerArgs

    spec = {} if draft is None else {
        "speculative_algorithm": "EAGLE3", "speculative_draft_model_path": str(draft), "speculative_num_steps": 2,
        "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 3}
    return ServerArgs(model_path=str(target), device="cpu", skip_tokenizer_init=True,
                      attention_backend="torch_native", sampling_backend="pytorch", disable_cuda_graph=True,
                      mem_fraction_static=0.05, max_total_tokens=256, max_running_requests=4,
                      chunked_prefill_size=64, max_prefill_tokens=64, nccl_port=free_port(), **spec, **extra)


def start_runner(args):
    """What the scheduler and its TP worker do before the first batch, for one CPU rank."""
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.layers.moe import initialize_moe_config
    from sglang.srt.model_executor.model_runner import ModelRunner

    if importlib.util.find_spec("sglang.srt.runtime_context") is None:  # 0.5.9: global server args
        from sglang.srt.server_args import set_global_server_args_for_scheduler

        set_global_server_args_for_scheduler(args)
        initialize_moe_config(args)
        config = ModelConfig.from_server_args(args)
        # ModelRunner itself inits gloo (world size 1), model parallel and DP attention on CPU
        return ModelRunner(model_config=config, mem_fraction_static=args.mem_fraction_static, gpu_id=0,
                           tp_rank=0, tp_size=1, moe_ep_rank=0, moe_ep_size=1, pp_rank=0, pp_size=1,
                           nccl_port=args.nccl_port, server_args=args)
    from sglang.srt.distributed import bootstrap

    if not hasattr(bootstrap, "init_parallel_runtime"):  # 0.5.17: the TP worker builds the runner
        return start_worker_0_5_17(args).model_runner
    # 0.5.23: the scheduler publishes the config, then bootstrap builds the process groups
    from sglang.srt.runtime_context import SpawnRanks, publish

    publish(args, role="scheduler", ranks=SpawnRanks(world_rank=0, dp_rank=None, gpu_id=0))
    config = ModelConfig.from_server_args(args)
    bootstrap.init_parallel_runtime(server_args=args, device="cpu", dist_port=args.nccl_port)
    bootstrap.init_layer_runtime(model_config=config)
    initialize_moe_config()
    runner = ModelRunner(model_config=config, mem_fraction_static=args.mem_fraction_static, gpu_id=0,
                         nccl_port=args.nccl_port, server_args=args)
    # what the scheduler asks its TP worker for next; with CUDA graphs off the last one records their absence
    runner.alloc_memory_pool()
    runner.init_attention_backends()
    with torch.no_grad():
        runner.init_cuda_graphs()
    return runner


def start_worker_0_5_17(args, draft: bool = False):
    """0.5.17's scheduler order: publish, MoE config, TpModelWorker (gloo, groups, ModelRunner, weights), with
    `draft` the EAGLE-3 draft worker (its runner, weights, then lm head and embedding from the target), then KV
    pools, attention backends (configure_aux_hidden_state_capture first) and CUDA graphs (none here)."""
    from sglang.srt.distributed.parallel_state_wrapper import ParallelState
    from sglang.srt.layers.moe import initialize_moe_config
    from sglang.srt.managers.tp_worker import TpModelWorker
    from sglang.srt.runtime_context import get_context, publish

    publish(args, role="scheduler")
    initialize_moe_config(args)
    worker = TpModelWorker(server_args=args, gpu_id=0, ps=ParallelState.trivial(), nccl_port=args.nccl_port)
    worker.draft_worker = None
    if draft:  # as Scheduler.maybe_init_draft_worker
        from sglang.srt.speculative.draft_worker_common import draft_server_args_copy
        from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

        draft_args = draft_server_args_copy(server_args=args, target_model_config=worker.model_runner.model_config)
        draft_cls = SpeculativeAlgorithm.from_string(args.speculative_algorithm).create_worker(draft_args)
        with get_context().preserve_config():
            get_context().set_server_args(draft_args)
            worker.draft_worker = draft_cls(server_args=draft_args, gpu_id=0, ps=worker.ps,
                                            nccl_port=args.nccl_port, target_worker=worker)
    worker.alloc_memory_pool()
    worker.draft_pool_error = None
    if worker.draft_worker is not None:
        pool, allocator = worker.get_memory_pool()
        try:
            worker.draft_worker.alloc_memory_pool(memory_pool_config=worker.model_runner.memory_pool_config,
                                                  req_to_token_pool=pool, token_to_kv_pool_allocator=allocator)
        except standins.KernelUnavailable as exc:  # the draft's MHA pool warms up with a kernel (docs/runtime.md)
            worker.draft_pool_error = str(exc)
            # the rest of EagleDraftWorker.alloc_memory_pool, in its order: SGLang's own head/embedding set-up
            worker.draft_worker.draft_worker.init_token_map()
            worker.draft_worker.draft_worker.init_lm_head()
    worker.init_attention_backends()
    if worker.draft_worker is not None and worker.draft_pool_error is None:
        worker.draft_worker.init_attention_backends()
    with torch.no_grad():
        worker.init_cuda_graphs()
    return worker


def record_calls(cls, names, log: list) -> None:
    """Wrap cls.<name> for each name it has, to log each call with its arguments and the SGLang function calling it."""
    for name in names:
        original = getattr(cls, name, None)  # inherited ones too (the EAGLE-3 draft's set_embed is LlamaForCausalLM's)
        if original is None:
            continue

        def wrapper(self, *args, _name=name, _original=original):
            caller = sys._getframe(1)
            where = caller.f_code.co_filename.split("/sglang/", 1)[-1]
            log.append({"method": _name, "args": [list(a) if isinstance(a, list | tuple) else type(a).__name__
                                                  for a in args], "caller": f"{where}:{caller.f_code.co_name}"})
            return _original(self, *args)

        setattr(cls, name, wrapper)


def capture_state(model) -> dict:
    lm = model.language_model
    return {"capture_aux_hidden_states": lm.capture_aux_hidden_states,
            "layers_to_capture": list(lm.model.layers_to_capture)}


def load_with_sentinel(model_class, model_config) -> tuple[object, list[str]]:
    """Build `model_class` and load the checkpoint over NaN-filled parameters: what stays NaN was never loaded."""
    from sglang.srt.configs.load_config import LoadConfig
    from sglang.srt.model_loader.loader import DefaultModelLoader
    from sglang.srt.model_loader.utils import set_default_torch_dtype

    loader = DefaultModelLoader(LoadConfig())
    with set_default_torch_dtype(model_config.dtype), torch.device("cpu"):
        model = model_class(config=model_config.hf_config, quant_config=None)
    with torch.no_grad():
        for param in model.parameters():
            param.fill_(math.nan)
    loader.load_weights_and_postprocess(model, loader._get_all_weights(model_config, model), torch.device("cpu"))
    missing = sorted(n for n, p in model.named_parameters() if p.is_floating_point() and p.isnan().any())
    return model, missing


def load_unfixed_class(path: Path, name: str):
    """The release's own kimi_k25.py, imported beside the fixed copy (same SGLang, same state)."""
    spec = importlib.util.spec_from_file_location("sglang.srt.models._kimi_k25_unfixed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), module.__file__


def missing_methods(model) -> dict[str, str | None]:
    out = {}
    for name in EAGLE3:
        try:
            getattr(model, name)
            out[name] = None
        except AttributeError as exc:
            out[name] = f"AttributeError: {exc}"
    return out


def eagle3_behaviour(model) -> dict:
    lm = model.language_model
    report = {"before": capture_state(model)}
    model.set_eagle3_layers_to_capture([1])
    report["after_set_layers"] = capture_state(model)
    embed, head = model.get_embed_and_head()
    report["get_embed_and_head"] = {"embed_is_wrapped": embed is lm.model.embed_tokens.weight,
                                    "head_is_wrapped": head is lm.lm_head.weight,
                                    "embed_shape": list(embed.shape), "head_shape": list(head.shape)}
    new_embed = torch.nn.Parameter(embed.detach().clone() + 1, requires_grad=False)
    new_head = torch.nn.Parameter(head.detach().clone() + 1, requires_grad=False)
    model.set_embed_and_head(new_embed, new_head)
    report["set_embed_and_head"] = {"embed_replaced": lm.model.embed_tokens.weight is new_embed,
                                    "head_replaced": lm.lm_head.weight is new_head,
                                    "get_returns_new": all(a is b for a, b in
                                                           zip(model.get_embed_and_head(), (new_embed, new_head),
                                                               strict=True))}
    return report


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--draft", type=Path, required=True)
    parser.add_argument("--unfixed", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--forward", action="store_true")
    parser.add_argument("--eagle3-server-args", action="store_true",
                        help="start as an EAGLE-3 engine: SGLang's own start-up calls set_eagle3_layers_to_capture")
    parser.add_argument("--draft-worker", action="store_true",
                        help="(0.5.17) also build the EAGLE-3 draft worker, as the scheduler does")
    opts = parser.parse_args()

    import sglang
    from sglang.srt.models import kimi_k25

    args = server_args(opts.target, opts.draft if opts.eagle3_server_args else None)
    calls: list = []
    record_calls(kimi_k25.KimiK25ForConditionalGeneration, EAGLE3, calls)
    if opts.draft_worker:  # 0.5.17 only
        from sglang.srt.models import llama_eagle3

        record_calls(llama_eagle3.LlamaForCausalLMEagle3, ("set_embed", "set_embed_and_head"), calls)
        worker = start_worker_0_5_17(args, draft=True)
        runner = worker.model_runner
    else:
        runner = start_runner(args)
    model = runner.model
    sglang_setup = {"calls": list(calls), "capture": capture_state(model)}
    if opts.draft_worker:
        draft_model = worker.draft_worker.draft_worker.draft_runner.model
        sglang_setup["draft_worker"] = {
            "class": type(worker.draft_worker).__name__, "pool_error": worker.draft_pool_error,
            "embed_is_targets": draft_model.model.embed_tokens.weight is model.language_model.model.embed_tokens.weight,
            "head_is_targets": draft_model.lm_head.weight is model.language_model.lm_head.weight}
    report = {"sglang": sglang.__version__, "sglang_file": sglang.__file__, "torch": torch.__version__,
              "cuda": torch.cuda.is_available(), "env_cpu_engine": os.environ.get("SGLANG_USE_CPU_ENGINE"),
              "fixed_class": f"{type(model).__module__}.{type(model).__qualname__}",
              "fixed_class_file": sys.modules[type(model).__module__].__file__, "sglang_setup": sglang_setup}

    unfixed_cls, report["unfixed_class_file"] = load_unfixed_class(opts.unfixed, type(model).__name__)
    unfixed, unfixed_missing = load_with_sentinel(unfixed_cls, runner.model_config)
    report["unfixed_methods"] = missing_methods(unfixed)
    report["unloaded_params"] = {"target": unfixed_missing}

    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.model_loader import get_model_architecture

    draft_config = ModelConfig.from_server_args(args, model_path=str(opts.draft), is_draft_model=True)
    draft_cls, _ = get_model_architecture(draft_config)
    _, report["unloaded_params"]["draft"] = load_with_sentinel(draft_cls, draft_config)
    report["draft_class"] = draft_cls.__name__

    report["fixed_methods"] = missing_methods(model)
    report["eagle3"] = eagle3_behaviour(model)
    layers = model.language_model.model.layers_to_capture
    if opts.forward and layers:  # with capture left off there is no aux state to compare: the tests say so
        from forward_decode import decode_with_aux

        report["forward"] = decode_with_aux(runner, capture_layer=layers[0])
    opts.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
