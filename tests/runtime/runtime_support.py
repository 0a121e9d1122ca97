"""Shared set-up of the runtime tier: its cached venvs, tiny checkpoints and the probe runner.

Not a conftest.py: tests/conftest.py is imported by name (`from conftest import REPO`),
and a second conftest module would take its place in sys.modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "runtime"
sys.path.insert(0, str(RUNTIME_SCRIPTS))

import gpu_carry  # noqa: E402
import gpu_eagle3_kimi_k25 as gpu_script  # noqa: E402
import gpu_verdict  # noqa: E402
import trim_kernel_wheel  # noqa: E402
from draft_probe import eaglelint_draft_probe as draft_probe  # noqa: E402
from prepare_tree import EAGLE3, KIMI, copy_package, installed_package, run_fix, strip_methods  # noqa: E402
from runtime_venv import RuntimeVenvError, ensure_venv  # noqa: E402

__all__ = ["EAGLE3", "KIMI", "RUNTIME_SCRIPTS", "assert_sglang_set_up_capture", "copy_package", "draft_probe",
           "gpu_carry", "gpu_script", "gpu_verdict", "installed_package", "run_fix", "run_imports", "run_probe",
           "strip_methods", "trim_kernel_wheel", "venv_python", "write_checkpoints"]

PROBE = Path(__file__).resolve().parent / "probe_kimi_k25.py"
IMPORTS = Path(__file__).resolve().parent / "probe_imports.py"
PROBE_TIMEOUT_S = 900


def venv_python(version: str) -> Path:
    """The runtime venv's python; a venv that cannot be built fails the test, it is never skipped."""
    try:
        return ensure_venv(version)
    except RuntimeVenvError as exc:
        pytest.fail(f"the runtime tier needs its own venv for sglang {version} and could not build it.\n{exc}",
                    pytrace=False)


def write_checkpoints(out: Path, layers: int = 3) -> tuple[Path, Path]:
    """The tiny Kimi-K2.5 (3 layers, the CPU build) and the EAGLE-3 draft the GPU script uses."""
    done = subprocess.run([str(venv_python("0.5.9")), str(RUNTIME_SCRIPTS / "tiny_checkpoints.py"), str(out),
                           "--layers", str(layers)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return out / "target", out / "draft"


def run_child(python: Path, script: Path, args: list[str], out: Path, tree: Path | None) -> dict:
    """Run `script` in the runtime venv with `tree` (if any) first on sys.path and SGLang's CPU engine
    switch on; the JSON it wrote to `out`."""
    env = dict(os.environ, SGLANG_USE_CPU_ENGINE="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    done = subprocess.run([str(python), str(script), *args], env=env, capture_output=True, text=True,
                          timeout=PROBE_TIMEOUT_S, cwd=out.parent)
    assert done.returncode == 0, f"{script.name} failed (exit {done.returncode}):\n{done.stderr[-6000:]}"
    return json.loads(out.read_text())


def run_probe(python: Path, tree: Path, checkpoints: tuple[Path, Path], unfixed: Path, out: Path,
              forward: bool = False, eagle3: bool = False, draft_worker: bool = False) -> dict:
    """The probe's report on the tiny Kimi-K2.5 built from `tree` (with `eagle3`, started as an EAGLE-3 engine;
    with `draft_worker`, 0.5.17 only, with its EAGLE-3 draft worker too)."""
    flags = {"--forward": forward, "--eagle3-server-args": eagle3, "--draft-worker": draft_worker}
    args = ["--target", str(checkpoints[0]), "--draft", str(checkpoints[1]), "--unfixed", str(unfixed),
            "--out", str(out), *(flag for flag, on in flags.items() if on)]
    return run_child(python, PROBE, args, out, tree)


def assert_sglang_set_up_capture(report: dict, layer_ids: list[int], captured: list[int]) -> None:
    """SGLang's own start-up called set_eagle3_layers_to_capture(layer_ids) and the language model now captures."""
    calls = [c for c in report["sglang_setup"]["calls"] if c["method"] == EAGLE3[0]]
    assert calls, f"SGLang's start-up never called {EAGLE3[0]} (calls seen: {report['sglang_setup']['calls']})"
    state = report["sglang_setup"]["capture"]
    assert state == {"capture_aux_hidden_states": True, "layers_to_capture": captured}, (
        f"SGLang called {EAGLE3[0]}({calls[0]['args'][0]}) from {calls[0]['caller']}, and the language model "
        f"does not capture layers {captured}: {state} (a {EAGLE3[0]} that does nothing?)")
    assert calls[0]["args"] == [layer_ids], calls


def run_imports(python: Path, tree: Path | None, out: Path) -> dict:
    """How each module of sglang.srt.models imports, from `tree` or (None) from the release itself."""
    return run_child(python, IMPORTS, [str(out)], out, tree)
