"""EAGLE-3 on a tiny Kimi-K2.5 in a real SGLang engine on one GPU: unfixed, fixed and broken-fix runs, one verdict.

Why: the CPU tier shows the delegations behave; this shows the whole engine
path SGLang takes for `speculative_algorithm="EAGLE3"` (target and draft workers,
set_eagle3_layers_to_capture at start-up, get_embed_and_head / set_embed for the
draft, draft and verify steps). It writes random-weight checkpoints (no
download, no tokenizer: token ids in, token ids out) and three copies of the
installed sglang package: unfixed (for releases that already delegate, 0.5.10
and later, the three methods are first removed from kimi_k25.py to bring back
0.5.9's gap), fixed by `eaglelint fix --write`, and broken (the fixed copy with
a set_eagle3_layers_to_capture that does nothing). Each runs sglang.Engine in a
child process of its own session, with a timeout, its output in its own log,
and draft_probe/ on its path, which prints the width of the hidden states
entering the EAGLE-3 draft (gpu_verdict.py says what must hold). Backends need
no FlashInfer: triton attention, pytorch sampling, CUDA graphs off (so the
draft's Python forward runs at every step).

    python scripts/runtime/gpu_eagle3_kimi_k25.py WORK [--out DIR] [--budget S] [--prepare-only]

Writes OUT/verdict.json and OUT/engine-<name>.log; exit 0 when the verdict holds.
Run on a GPU machine through scripts/runtime/gpu_check.sh.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from gpu_verdict import AUX_LAYER_IDS, MAX_NEW_TOKENS, RESULT_MARK, engine_problems, read_engine_log, verdict  # noqa: E402
from prepare_tree import EAGLE3, KIMI, copy_package, installed_package, noop_method, run_fix, strip_methods  # noqa: E402

PROBE_PATH = HERE / "draft_probe"  # its sitecustomize.py loads the draft-input probe in every engine process
PROMPT = [5, 6, 7, 8, 9, 10, 11, 12]
TARGET_LAYERS = 5  # with aux ids 1,2,3 SGLang captures layers 2, 3, 4 (needs 5)
ENGINE_ARGS = {
    "speculative_algorithm": "EAGLE3", "speculative_num_steps": 2, "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 3, "attention_backend": "triton", "sampling_backend": "pytorch",
    "disable_cuda_graph": True, "skip_tokenizer_init": True, "enable_multimodal": False,
    "mem_fraction_static": 0.3, "max_total_tokens": 4096, "max_running_requests": 4, "dtype": "bfloat16",
}
# Order and time caps (s). The fixed engine goes first: it pays for the JIT-compiled kernels
# (triton, sglang.jit_kernel), which the later engines find in the caches. The unfixed one dies
# at start-up, after loading, when SGLang asks for set_eagle3_layers_to_capture.
ENGINES = (("fixed", 240), ("broken", 150), ("unfixed", 100))
FLOOR_S = 60  # kept back for each engine still to run


def prepare(work: Path, eaglelint_python: str) -> dict:
    """Checkpoints and the three trees; everything the engines need, nothing that needs a GPU."""
    from tiny_checkpoints import write_eagle3, write_kimi_k25

    if work.exists():
        shutil.rmtree(work)
    target = write_kimi_k25(work / "target", layers=TARGET_LAYERS)
    draft = write_eagle3(work / "draft", AUX_LAYER_IDS)
    package = installed_package(sys.executable)
    unfixed = copy_package(package, work / "unfixed")
    stripped = strip_methods(unfixed / "sglang" / KIMI[0], KIMI[1])  # [] on 0.5.9, which lacks them
    fixed, broken = work / "fixed", work / "broken"
    shutil.copytree(unfixed, fixed)
    env_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    done = run_fix(fixed / "sglang" / KIMI[0], eaglelint_python, env=dict(os.environ, PYTHONPATH=env_path))
    shutil.copytree(fixed, broken)
    noop_method(broken / "sglang" / KIMI[0], KIMI[1], EAGLE3[0])
    return {"package": str(package), "target": str(target), "draft": str(draft), "stripped": stripped,
            "unfixed_tree": str(unfixed), "fixed_tree": str(fixed), "broken_tree": str(broken),
            "fix_exit": done.returncode, "fix_output": (done.stdout + done.stderr)[-2000:]}


def _end_session(pid: int, exit_code: int | None = None) -> None:
    """Kill the engine's whole session; with `exit_code`, exit too (a SIGTERM from the shell's timeout: the
    session, started with setsid, would otherwise outlive this process and the GPU run)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    if exit_code is not None:
        sys.exit(exit_code)


def launch(tree: Path, target: str, draft: str, timeout: float, log: Path) -> dict:
    """Run the engine in a child session with `tree` and the probe first on sys.path; what its log shows."""
    path = [str(tree), str(PROBE_PATH), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in path if p), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--engine", target, draft]
    start = time.monotonic()
    with open(log, "w") as fh:
        child = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        previous = signal.signal(signal.SIGTERM, lambda *_: _end_session(child.pid, exit_code=143))
        try:
            code, timed_out = child.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        finally:  # SGLang's scheduler and detokenizer are grandchildren: end the whole session
            _end_session(child.pid)
            child.wait()
            signal.signal(signal.SIGTERM, previous)
    text = log.read_text(errors="replace")
    return {"exit": code, "timed_out": timed_out, "timeout_s": round(timeout), "seconds":
            round(time.monotonic() - start, 1), "log": log.name, **read_engine_log(text), "log_tail": text[-3000:]}


def engine_child(target: str, draft: str) -> None:
    import sglang

    print(f"engine: sglang {sglang.__version__} from {sglang.__file__}", flush=True)
    engine = sglang.Engine(model_path=target, speculative_draft_model_path=draft, **ENGINE_ARGS)
    try:
        out = engine.generate(input_ids=[PROMPT], sampling_params={"temperature": 0, "max_new_tokens": MAX_NEW_TOKENS,
                                                                   "ignore_eos": True})
    finally:
        engine.shutdown()
    out = out[0] if isinstance(out, list) else out
    meta = out.get("meta_info", {})
    print(RESULT_MARK + json.dumps({"sglang": sglang.__version__, "sglang_file": sglang.__file__,
                                    "output_ids": out.get("output_ids"),
                                    "meta_info": {k: v for k, v in meta.items() if k.startswith("spec_") or k in
                                                  ("completion_tokens", "prompt_tokens", "finish_reason")}}),
          flush=True)


def run_engines(summary: dict, out: Path, budget: float) -> None:
    """Each engine in turn, each with its cap, all inside `budget` seconds from now."""
    deadline = time.monotonic() + budget
    for i, (name, cap) in enumerate(ENGINES):
        left = deadline - time.monotonic() - FLOOR_S * (len(ENGINES) - i - 1)
        if left < 30:
            summary[name] = {"skipped": f"no time left ({left:.0f} s)"}
            continue
        print(f"== engine {name}: timeout {min(cap, left):.0f} s", flush=True)
        run = launch(Path(summary[f"{name}_tree"]), summary["target"], summary["draft"], min(cap, left),
                     out / f"engine-{name}.log")
        run["problems"] = engine_problems(run)
        summary[name] = run
        marks = sorted({(m.get("mode"), m.get("width")) for m in run["draft_inputs"]}, key=str)
        print(f"   exit {run['exit']}, {run['seconds']} s, timed out: {run['timed_out']}, tokens: "
              f"{len((run['result'] or {}).get('output_ids') or [])}, missing methods: {run['missing_method_errors']}, "
              f"draft inputs (mode, width): {marks}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, nargs="?")
    parser.add_argument("--out", type=Path, help="where verdict.json and the engine logs go (default WORK)")
    parser.add_argument("--budget", type=float, default=440, help="seconds for all three engines together")
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument("--eaglelint-python", default=sys.executable)
    parser.add_argument("--engine", nargs=2, metavar=("TARGET", "DRAFT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        engine_child(*args.engine)
        return 0
    if args.work is None:
        parser.error("WORK is required")
    out = args.out or args.work
    start = time.monotonic()
    summary = prepare(args.work, args.eaglelint_python)
    out.mkdir(parents=True, exist_ok=True)
    print(f"== prepared in {time.monotonic() - start:.1f} s: fix exit {summary['fix_exit']}, "
          f"stripped {summary['stripped']}", flush=True)
    if not args.prepare_only:
        run_engines(summary, out, args.budget - (time.monotonic() - start))
        summary["problems"] = verdict(summary)
        summary["verdict"] = "FAIL" if summary["problems"] else "PASS"
    (out / "verdict.json").write_text(json.dumps(summary, indent=2))
    if not args.prepare_only:
        print(f"GPU_CHECK_VERDICT {summary['verdict']}" + "".join(f"\n  - {p}" for p in summary["problems"]))
    return 1 if summary.get("problems") else 0


if __name__ == "__main__":
    sys.exit(main())
