"""EAGLE-3 on a tiny Kimi-K2.5 in a real SGLang engine on one GPU: the unfixed tree dies, the fixed one decodes.

Why: the CPU tier shows the delegations behave; this shows the whole engine
path SGLang takes for `speculative_algorithm="EAGLE3"` (target and draft workers,
set_eagle3_layers_to_capture at start-up, get_embed_and_head / set_embed_and_head
between them, draft and verify steps). It writes random-weight checkpoints (no
download, no tokenizer: token ids in, token ids out), copies the installed
sglang package twice (if the release already delegates, 0.5.10 and later, the
three methods are first removed from the copy's kimi_k25.py to bring back 0.5.9's
gap), lets `eaglelint fix --write` fix one copy, and launches sglang.Engine once
per copy in a child process. Backends need no FlashInfer: triton attention,
pytorch sampling, CUDA graphs off.

    python scripts/runtime/gpu_eagle3_kimi_k25.py WORK [--prepare-only] [--eaglelint-python PY]

Writes WORK/summary.json; exit 0 when the unfixed engine fails with the
missing-method error and the fixed one generates tokens with speculative stats.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from prepare_tree import EAGLE3, KIMI, copy_package, installed_package, run_fix, strip_methods  # noqa: E402

PROMPT = [5, 6, 7, 8, 9, 10, 11, 12]
MAX_NEW_TOKENS = 24
TARGET_LAYERS = 5  # with aux ids 1,2,3 SGLang captures layers 2, 3, 4 (needs 5)
AUX_LAYER_IDS = [1, 2, 3]
MISSING = re.compile(r"'KimiK25ForConditionalGeneration' object has no attribute '(" + "|".join(EAGLE3) + ")'")
ENGINE_ARGS = {
    "speculative_algorithm": "EAGLE3", "speculative_num_steps": 2, "speculative_eagle_topk": 1,
    "speculative_num_draft_tokens": 3, "attention_backend": "triton", "sampling_backend": "pytorch",
    "disable_cuda_graph": True, "skip_tokenizer_init": True, "enable_multimodal": False,
    "mem_fraction_static": 0.3, "max_total_tokens": 4096, "max_running_requests": 4, "dtype": "bfloat16",
}
MARK = "GPU_EAGLE3_RESULT "


def prepare(work: Path, eaglelint_python: str) -> dict:
    """Checkpoints and the two trees; everything the engines need, nothing that needs a GPU."""
    from tiny_checkpoints import write_eagle3, write_kimi_k25

    if work.exists():
        shutil.rmtree(work)
    target = write_kimi_k25(work / "target", layers=TARGET_LAYERS)
    draft = write_eagle3(work / "draft", AUX_LAYER_IDS)
    package = installed_package(sys.executable)
    unfixed = copy_package(package, work / "unfixed")
    kimi = unfixed / "sglang" / KIMI[0]
    stripped = strip_methods(kimi, KIMI[1])  # [] on 0.5.9, which lacks them
    fixed = work / "fixed"
    shutil.copytree(unfixed, fixed)
    env_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    done = run_fix(fixed / "sglang" / KIMI[0], eaglelint_python, env=dict(os.environ, PYTHONPATH=env_path))
    return {"package": str(package), "target": str(target), "draft": str(draft), "stripped": stripped,
            "unfixed_tree": str(unfixed), "fixed_tree": str(fixed), "fix_exit": done.returncode,
            "fix_output": (done.stdout + done.stderr)[-2000:]}


def launch(tree: Path, target: str, draft: str, timeout: int) -> dict:
    """Run the engine in a child with `tree` first on sys.path; what it printed, and its result if any."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]),
               PYTHONUNBUFFERED="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--engine", target, draft]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        code, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        code, output = "timeout", f"{exc.stdout or ''}{exc.stderr or ''}"
        output = output.decode(errors="replace") if isinstance(output, bytes) else output
    result = next((json.loads(line[len(MARK):]) for line in output.splitlines() if line.startswith(MARK)), None)
    missing = sorted(set(MISSING.findall(output)))
    return {"exit": code, "result": result, "missing_method_errors": missing, "log_tail": output[-4000:]}


def engine_child(target: str, draft: str) -> None:
    import sglang

    engine = sglang.Engine(model_path=target, speculative_draft_model_path=draft, **ENGINE_ARGS)
    try:
        out = engine.generate(input_ids=[PROMPT], sampling_params={"temperature": 0, "max_new_tokens": MAX_NEW_TOKENS,
                                                                   "ignore_eos": True})
    finally:
        engine.shutdown()
    out = out[0] if isinstance(out, list) else out
    meta = out.get("meta_info", {})
    print(MARK + json.dumps({"sglang": sglang.__version__, "sglang_file": sglang.__file__,
                             "output_ids": out.get("output_ids"),
                             "meta_info": {k: v for k, v in meta.items() if k.startswith("spec_") or k in
                                           ("completion_tokens", "prompt_tokens", "finish_reason")}}), flush=True)


def verdict(summary: dict) -> list[str]:
    """What is wrong with the run; empty when the proof holds."""
    problems = []
    unfixed, fixed = summary["unfixed"], summary["fixed"]
    if unfixed["result"] is not None or not unfixed["missing_method_errors"]:
        problems.append("the unfixed engine did not fail with the missing-method error")
    result = fixed["result"] or {}
    meta = result.get("meta_info", {})
    if len(result.get("output_ids") or []) != MAX_NEW_TOKENS:
        problems.append(f"the fixed engine did not generate {MAX_NEW_TOKENS} tokens")
    if not meta.get("spec_verify_ct"):
        problems.append("the fixed engine reported no speculative verify steps (spec_verify_ct)")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work", type=Path, nargs="?")
    parser.add_argument("--prepare-only", action="store_true")
    parser.add_argument("--eaglelint-python", default=sys.executable)
    parser.add_argument("--timeout", type=int, default=420, help="seconds per engine run")
    parser.add_argument("--engine", nargs=2, metavar=("TARGET", "DRAFT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        engine_child(*args.engine)
        return 0
    if args.work is None:
        parser.error("WORK is required")
    summary = prepare(args.work, args.eaglelint_python)
    if not args.prepare_only:
        for name in ("unfixed", "fixed"):
            summary[name] = launch(Path(summary[f"{name}_tree"]), summary["target"], summary["draft"], args.timeout)
        summary["problems"] = verdict(summary)
    (args.work / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k != "fix_output"}, indent=2))
    return 1 if summary.get("problems") else 0


if __name__ == "__main__":
    sys.exit(main())
