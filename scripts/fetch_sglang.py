"""Real SGLang (and one vLLM) releases: fetched from the package registry, cached, never committed.

Why a script of its own: the README's main job, the release tests and the
benchmark all need the same cached trees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

# The 0.5.23 wheel is built per platform; ask for the one CI's Python can read.
PLATFORM_ARGS = [
    "--only-binary=:all:", "--implementation", "cp", "--python-version", "3.11",
    "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux2014_x86_64",
]


def cache_root() -> Path:
    base = os.environ.get("EAGLELINT_RELEASES")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "eaglelint" / "releases"


def _fetch(package: str, version: str, prefix: str, extra_args: tuple[str, ...] = (),
           drop_wheel: bool = False) -> Path:
    """Download one wheel with pip (cached), extract its .py files under `prefix`, once."""
    root = cache_root() / f"{package}-{version}"
    if (root / ".complete").is_file():
        return root
    wheels = cache_root() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = sorted(wheels.glob(f"{package}-{version}-*.whl"))
    if not found:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheels),
               *PLATFORM_ARGS, *extra_args, f"{package}=={version}"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        found = sorted(wheels.glob(f"{package}-{version}-*.whl"))
        if done.returncode != 0 or not found:
            raise RuntimeError(f"cannot fetch {package}=={version}: {done.stderr[-2000:]}")
    tmp = root.with_name(root.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as zf:
        zf.extractall(tmp, [m for m in zf.namelist() if m.startswith(prefix) and m.endswith(".py")])
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    (root / ".complete").touch()
    if drop_wheel:
        for wheel in found:
            wheel.unlink()
    return root


def release_root(version: str) -> Path:
    """A directory holding `sglang/` of that release (the import root)."""
    return _fetch("sglang", version, "sglang/")


def models_dir(version: str) -> Path:
    return release_root(version) / "sglang" / "srt" / "models"


# vLLM, for the `vllm` interface pack: one pinned release, only its model code is kept.
VLLM_VERSION = "0.33.0"
VLLM_PREFIX = "vllm/model_executor/models/"


def vllm_models_dir(version: str = VLLM_VERSION) -> Path:
    """vllm/model_executor/models of a vLLM release (the tree above it is the import root).

    The wheel is large (about 340 MB), so it is deleted once its model code is extracted.
    """
    root = _fetch("vllm", version, VLLM_PREFIX, ("--platform", "manylinux_2_28_x86_64"), drop_wheel=True)
    return root / VLLM_PREFIX.rstrip("/")


if __name__ == "__main__":
    # `python scripts/fetch_sglang.py 0.5.9` prints the cached models folder of that release;
    # `python scripts/fetch_sglang.py vllm` the pinned vLLM release's.
    for version in sys.argv[1:] or ["0.5.23"]:
        print(vllm_models_dir() if version == "vllm" else models_dir(version))
