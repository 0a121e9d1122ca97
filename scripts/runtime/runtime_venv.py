"""The runtime tier's own virtual environments: a CPU torch and one pinned SGLang release.

Why a venv of its own: SGLang pins a CUDA torch and CUDA-only kernels, so it
cannot share eaglelint's venv; every package is pinned in pins/sglang-<version>.txt
and installed with --no-deps, so what runs is exactly what was tried. The venv
lives in ~/.cache/eaglelint/runtime-venv-<hash of the pin list> (or under
$EAGLELINT_RUNTIME_CACHE), is built once, and is rebuilt when the list changes.

    python scripts/runtime/runtime_venv.py 0.5.9      # build (or find) it, print its python
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parent / "pins"
PIP_TIMEOUT_S = 1800
# A venv that passes this check has a CPU torch and an importable SGLang release.
CHECK = "import torch, importlib.metadata as m; assert torch.version.cuda is None, torch.__version__; " \
        "print(m.version('sglang'), torch.__version__)"


class RuntimeVenvError(RuntimeError):
    """The venv could not be built; the message says which step and shows pip's last words."""


def cache_root() -> Path:
    base = os.environ.get("EAGLELINT_RUNTIME_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "eaglelint"


def pins_file(version: str) -> Path:
    path = PINS / f"sglang-{version}.txt"
    if not path.is_file():
        raise RuntimeVenvError(f"no pin list for sglang {version}: {path}")
    return path


def venv_dir(version: str) -> Path:
    digest = hashlib.sha256(pins_file(version).read_bytes()).hexdigest()[:16]
    return cache_root() / f"runtime-venv-{digest}"


def ensure_venv(version: str) -> Path:
    """The venv's python, building the venv first if it is missing or incomplete."""
    pins = pins_file(version)
    root = venv_dir(version)
    python = root / "bin" / "python"
    marker = root / ".complete"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test run on this machine may be building it
        if marker.is_file():
            return python
        shutil.rmtree(root, ignore_errors=True)
        _run([sys.executable, "-m", "venv", str(root)], "create the venv")
        _run([str(python), "-m", "pip", "install", "--no-deps", "--only-binary=:all:", "-q", "-r", str(pins)],
             f"install {pins.name} (pip install --no-deps -r)")
        found = _run([str(python), "-c", CHECK], "import torch and read the sglang version")
        marker.write_text(found)
    return python


def _run(cmd: list[str], step: str) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeVenvError(f"runtime venv: could not {step}: no answer in {PIP_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = "\n".join(line for line in (done.stderr + done.stdout).splitlines() if "is ignored" not in line)
        raise RuntimeVenvError(f"runtime venv: could not {step} (exit {done.returncode}):\n{tail[-3000:]}")
    return done.stdout


if __name__ == "__main__":
    for v in sys.argv[1:] or ["0.5.9"]:
        print(ensure_venv(v))
