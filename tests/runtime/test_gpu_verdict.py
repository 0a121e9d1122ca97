"""The GPU run's verdict and its draft-input probe, on CPU: every outcome the one GPU run can have.

The logs below are written by hand in the shapes the engine child and SGLang
print (the result line, the probe's markers, SGLang's AttributeError), not
taken from a run; what must hold is stated in scripts/runtime/gpu_verdict.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from runtime_support import RUNTIME_SCRIPTS, gpu_verdict
from runtime_support import draft_probe as probe

AUX_WIDTH, MAX_NEW_TOKENS, MISSING, RESULT_MARK = (gpu_verdict.AUX_WIDTH, gpu_verdict.MAX_NEW_TOKENS,
                                                   gpu_verdict.MISSING, gpu_verdict.RESULT_MARK)
capture_problems, read_engine_log = gpu_verdict.capture_problems, gpu_verdict.read_engine_log
verdict = gpu_verdict.verdict

HIDDEN = 64


def mark(mode: str, width: int, fc_in: int = AUX_WIDTH) -> str:
    return probe.MARK + json.dumps({"mode": mode, "width": width, "rows": 8, "fc_in": fc_in, "embed_dim": HIDDEN})


def result_line(tokens: int = MAX_NEW_TOKENS, verify: int = 9) -> str:
    return RESULT_MARK + json.dumps({"sglang": "0.5.17", "output_ids": list(range(tokens)),
                                     "meta_info": {"spec_verify_ct": verify, "completion_tokens": tokens}})


def decoded(extend_width: int, **kw) -> dict:
    """An engine that decoded: draft extend steps fed by the target, then the draft's own decode steps."""
    log = "\n".join(["engine: sglang 0.5.17", "[2026-11-30 10:00:00] Load weight end.",
                     mark("EXTEND", extend_width), mark("DECODE", HIDDEN), mark("DECODE", HIDDEN),
                     "[rank0] " + mark("DRAFT_EXTEND", extend_width), result_line(**kw), ""])
    return {**read_engine_log(log), "timed_out": False}


UNFIXED = {**read_engine_log("Traceback (most recent call last):\n[rank0]: AttributeError: "
                             "'KimiK25ForConditionalGeneration' object has no attribute "
                             "'set_eagle3_layers_to_capture'\nRuntimeError: Initialization failed.\n"),
           "timed_out": False}


def test_missing_method_pattern_reads_sglangs_attribute_error():
    log = ("[rank0]: AttributeError: 'KimiK25ForConditionalGeneration' object has no attribute "
           "'set_eagle3_layers_to_capture'\nRuntimeError: Initialization failed.")
    assert MISSING.findall(log) == ["set_eagle3_layers_to_capture"]
    assert MISSING.findall("'DeepseekV3ForCausalLM' object has no attribute 'get_embed_and_head'") == []


def test_engine_log_yields_result_markers_and_errors():
    run = decoded(AUX_WIDTH)
    assert len(run["result"]["output_ids"]) == MAX_NEW_TOKENS
    assert [(m["mode"], m["width"]) for m in run["draft_inputs"]] == [
        ("EXTEND", 192), ("DECODE", 64), ("DECODE", 64), ("DRAFT_EXTEND", 192)]
    assert UNFIXED["missing_method_errors"] == ["set_eagle3_layers_to_capture"] and UNFIXED["result"] is None
    # a marker cut off by a killed process is skipped, not fatal
    assert probe.read_marks(probe.MARK + '{"mode": "EXT') == []


def test_verdict_passes_with_the_failure_the_capture_and_a_broken_fix_that_is_caught():
    assert verdict({"unfixed": UNFIXED, "fixed": decoded(AUX_WIDTH), "broken": decoded(HIDDEN)}) == []


def test_capture_check_calls_the_final_hidden_state_a_failure():
    # a no-op set_eagle3_layers_to_capture: the draft gets the target's 64-wide final hidden state
    problems = capture_problems(decoded(HIDDEN)["draft_inputs"])
    assert problems == ["no draft forward received hidden states 192 wide (3 captured layers x 64), only widths [64]: "
                        "the target's aux hidden states did not reach the draft"]
    assert capture_problems(decoded(AUX_WIDTH)["draft_inputs"]) == []


@pytest.mark.parametrize(("fixed", "broken", "expected"), [
    (decoded(HIDDEN), decoded(HIDDEN), "fixed: no draft forward received hidden states 192 wide"),
    ({**decoded(AUX_WIDTH), "draft_inputs": decoded(AUX_WIDTH)["draft_inputs"] + decoded(HIDDEN)["draft_inputs"]},
     decoded(HIDDEN), "fixed: draft extend steps received hidden states of another width than 192: "
                      "[('DRAFT_EXTEND', 64), ('EXTEND', 64)]"),
    ({**decoded(AUX_WIDTH), "draft_inputs": []}, decoded(HIDDEN), "fixed: no draft-input marker"),
    (decoded(AUX_WIDTH), decoded(AUX_WIDTH), "broken: the no-op set_eagle3_layers_to_capture passed"),
    (decoded(AUX_WIDTH), {"skipped": "no time left (12 s)"}, "broken: the no-op fix was not run"),
    (decoded(AUX_WIDTH, tokens=5), decoded(HIDDEN), f"fixed: did not generate {MAX_NEW_TOKENS} tokens"),
    (decoded(AUX_WIDTH, verify=0), decoded(HIDDEN), "fixed: reported no speculative verify steps"),
    ({**decoded(AUX_WIDTH), "timed_out": True, "timeout_s": 240}, decoded(HIDDEN), "fixed: timed out after 240 s"),
    ({**decoded(AUX_WIDTH), "draft_inputs": [json.loads(mark("EXTEND", AUX_WIDTH, fc_in=HIDDEN)[len(probe.MARK):])]},
     decoded(HIDDEN), "fixed: the draft's fc does not take 192 inputs"),
])
def test_verdict_names_each_way_the_proof_can_fail(fixed, broken, expected):
    problems = verdict({"unfixed": UNFIXED, "fixed": fixed, "broken": broken})
    assert any(p.startswith(expected) for p in problems), problems


def test_verdict_fails_when_the_unfixed_engine_does_not_die_of_the_gap():
    problems = verdict({"unfixed": decoded(AUX_WIDTH), "fixed": decoded(AUX_WIDTH), "broken": decoded(HIDDEN)})
    assert problems == ["unfixed: did not fail with the missing-method AttributeError"]


def test_verdict_holds_when_the_broken_fix_crashes_instead_of_decoding():
    crashed = {**read_engine_log("RuntimeError: shape mismatch\n"), "timed_out": False}
    assert verdict({"unfixed": UNFIXED, "fixed": decoded(AUX_WIDTH), "broken": crashed}) == []


class _Tensor:
    def __init__(self, *shape: int):
        self.shape = shape

    def dim(self) -> int:
        return len(self.shape)


FAKE_EAGLE3 = textwrap.dedent("""\
    from types import SimpleNamespace

    class LlamaModel:
        fc = SimpleNamespace(in_features=192)
        embed_tokens = SimpleNamespace(embedding_dim=64)

        def forward(self, input_ids, positions, forward_batch, input_embeds=None):
            return ("forwarded", input_ids, input_embeds)
""")


def test_sitecustomize_wraps_the_draft_forward_in_a_fresh_interpreter(tmp_path):
    """What an SGLang scheduler process gets: the probe on PYTHONPATH, the module imported later, by name."""
    models = tmp_path / "tree" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for pkg in (models.parents[1], models.parent, models):
        (pkg / "__init__.py").write_text("")
    (models / "llama_eagle3.py").write_text(FAKE_EAGLE3)
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("print('the shadowed sitecustomize ran')\n")
    code = textwrap.dedent("""\
        from types import SimpleNamespace
        from sglang.srt.models.llama_eagle3 import LlamaModel

        class T:
            def __init__(self, *shape): self.shape = shape
            def dim(self): return len(self.shape)

        batch = SimpleNamespace(spec_info=SimpleNamespace(hidden_states=T(8, 192)),
                                forward_mode=SimpleNamespace(name="EXTEND"))
        print(LlamaModel().forward("ids", "pos", batch, input_embeds="e"))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "tree"), str(RUNTIME_SCRIPTS / "draft_probe"),
                                                       str(other)]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "the shadowed sitecustomize ran"
    assert probe.read_marks(done.stdout) == [{"mode": "EXTEND", "width": 192, "rows": 8, "fc_in": 192,
                                              "embed_dim": 64}]
    assert lines[-1] == "('forwarded', 'ids', 'e')"  # arguments passed on, result returned untouched


def test_probe_wraps_once_and_passes_arguments_through(capsys):
    namespace: dict = {}
    exec(FAKE_EAGLE3, namespace)
    cls = namespace["LlamaModel"]
    probe.wrap(cls)
    probe.wrap(cls)  # a second install must not print twice per call
    batch = type("B", (), {"spec_info": type("S", (), {"hidden_states": _Tensor(3, 64)})(), "forward_mode": None})()
    assert cls().forward(1, 2, batch) == ("forwarded", 1, None)
    assert probe.read_marks(capsys.readouterr().out) == [{"mode": "None", "width": 64, "rows": 3, "fc_in": 192,
                                                          "embed_dim": 64}]
