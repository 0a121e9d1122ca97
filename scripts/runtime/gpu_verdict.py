"""The GPU run's verdict, from the three engines' logs: what must hold for the fix to count as proven.

Why a module of its own, standard library only: the verdict is the part that
must be right the first time it runs on a GPU, so it is tested on CPU against
written logs of every outcome (tests/runtime/test_gpu_verdict.py), and the GPU
script imports it unchanged.

The proof holds when
- the unfixed engine dies with SGLang's missing-method AttributeError;
- the fixed engine generates every token with speculative verify steps, and its
  draft receives hidden states 3 x hidden wide (the aux states of the three
  captured layers, concatenated) in its extend steps, as the draft-input
  markers show;
- the broken-fix engine (a no-op set_eagle3_layers_to_capture) fails that same
  capture check, whether it decodes or not: a check that passes it proves nothing.
"""

from __future__ import annotations

import json
import re

from draft_probe.eaglelint_draft_probe import read_marks

EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
MISSING = re.compile(r"'KimiK25ForConditionalGeneration' object has no attribute '(" + "|".join(EAGLE3) + ")'")
RESULT_MARK = "GPU_EAGLE3_RESULT "
MAX_NEW_TOKENS = 24
TARGET_HIDDEN = 64
AUX_LAYER_IDS = [1, 2, 3]
AUX_WIDTH = len(AUX_LAYER_IDS) * TARGET_HIDDEN
# Draft steps that read what the target handed over (the draft's multi-step DECODE reads its own output).
FED_BY_TARGET = ("EXTEND", "DRAFT_EXTEND", "DRAFT_EXTEND_V2")


def read_engine_log(text: str) -> dict:
    """The facts the verdict needs from one engine's log."""
    result = None
    for line in text.splitlines():
        if line.startswith(RESULT_MARK):
            try:
                result = json.loads(line[len(RESULT_MARK):])
            except json.JSONDecodeError:
                result = None
    return {"result": result, "missing_method_errors": sorted(set(MISSING.findall(text))),
            "draft_inputs": read_marks(text)}


def capture_problems(draft_inputs: list[dict], width: int = AUX_WIDTH) -> list[str]:
    """Why the draft-input markers do not show the captured aux states reaching the draft; empty when they do.

    Without capture nothing the draft reads can be `width` wide (the target's final hidden state and
    the draft's own are both one hidden wide), so one such forward is the evidence; the extend steps,
    which read what the target handed over, must then all be that wide.
    """
    if not draft_inputs:
        return ["no draft-input marker: the EAGLE-3 draft's forward was never seen (probe not loaded, or no "
                "draft step)"]
    seen = sorted({m.get("width") for m in draft_inputs}, key=str)
    if width not in seen:
        return [f"no draft forward received hidden states {width} wide ({len(AUX_LAYER_IDS)} captured layers x "
                f"{TARGET_HIDDEN}), only widths {seen}: the target's aux hidden states did not reach the draft"]
    wrong = sorted({(m.get("mode"), m.get("width")) for m in draft_inputs
                    if m.get("mode") in FED_BY_TARGET and m.get("width") != width}, key=str)
    if wrong:
        return [f"draft extend steps received hidden states of another width than {width}: {wrong}"]
    if any(m.get("fc_in") != width for m in draft_inputs):
        return [f"the draft's fc does not take {width} inputs: the draft checkpoint is not the one written"]
    return []


def engine_problems(run: dict) -> list[str]:
    """Why one engine run does not show a working EAGLE-3 decode with capture; empty when it does."""
    problems = []
    result = run.get("result") or {}
    if run.get("timed_out"):
        problems.append(f"timed out after {run.get('timeout_s')} s")
    if len(result.get("output_ids") or []) != MAX_NEW_TOKENS:
        problems.append(f"did not generate {MAX_NEW_TOKENS} tokens")
    if not (result.get("meta_info") or {}).get("spec_verify_ct"):
        problems.append("reported no speculative verify steps (spec_verify_ct)")
    return problems + capture_problems(run.get("draft_inputs") or [])


def verdict(summary: dict) -> list[str]:
    """What is wrong with the run; empty when the proof holds. `summary` holds 'unfixed', 'fixed', 'broken'."""
    problems = []
    unfixed = summary.get("unfixed") or {}
    if unfixed.get("result") is not None or not unfixed.get("missing_method_errors"):
        problems.append("unfixed: did not fail with the missing-method AttributeError")
    problems += [f"fixed: {p}" for p in engine_problems(summary.get("fixed") or {})]
    broken = summary.get("broken") or {}
    if not broken or broken.get("skipped"):
        problems.append("broken: the no-op fix was not run, so the capture check was never shown to fail")
    elif not engine_problems(broken):
        problems.append("broken: the no-op set_eagle3_layers_to_capture passed every check the fixed engine must "
                        "pass, so the checks cannot tell a fix that does nothing from one that works")
    return problems
