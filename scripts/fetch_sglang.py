"""Real SGLang (and one vLLM) releases: fetched from the package registry, cached, never committed.

Why a script of its own: the README's main job, the release tests and the
benchmark all need the same cached trees.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
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


def fetch(package: str, version: str, prefixes: tuple[str, ...], extra_args: tuple[str, ...] = (),
           drop_wheel: bool = False) -> Path:
    """Download one wheel with pip (cached), extract its .py files under `prefixes`, once.

    The `.complete` marker lists the prefixes extracted; a tree whose marker does not
    cover them (an older fetch kept less) is extracted again. Extraction goes to a
    fresh temporary folder that is renamed into place, marker included, so a reader
    sees the old tree or the new one, never half of one, and two fetches of the same
    release at once each finish with a whole tree (the later rename wins).
    """
    root = cache_root() / f"{package}-{version}"
    if _covers(root / ".complete", prefixes):
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
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        with zipfile.ZipFile(found[0]) as zf:
            zf.extractall(tmp, [m for m in zf.namelist() if m.startswith(prefixes) and m.endswith(".py")])
        (tmp / ".complete").write_text("".join(f"{p}\n" for p in prefixes))
        tmp.chmod(0o755)  # mkdtemp makes it private; the cache is read like any other folder
        if _covers(root / ".complete", prefixes):
            return root  # another fetch finished first: keep the tree readers may be using
        old = Path(tempfile.mkdtemp(prefix=f".{root.name}.old.", dir=root.parent))
        with contextlib.suppress(FileNotFoundError):
            root.rename(old / "tree")  # out of the way in one step; deleted below
        try:
            tmp.rename(root)
        except OSError:  # another fetch put its whole tree there meanwhile
            if not _covers(root / ".complete", prefixes):
                raise
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if drop_wheel:
        for wheel in found:
            wheel.unlink(missing_ok=True)
    return root


def _covers(marker: Path, prefixes: tuple[str, ...]) -> bool:
    """Whether a cached tree holds every prefix; an empty marker (written before markers
    listed prefixes) holds the first one only, all that those fetches extracted."""
    try:
        listed = marker.read_text().split() or list(prefixes[:1])
    except OSError:
        return False
    return set(prefixes) <= set(listed)


def release_root(version: str) -> Path:
    """A directory holding `sglang/` of that release (the import root)."""
    return fetch("sglang", version, ("sglang/",))


def models_dir(version: str) -> Path:
    return release_root(version) / "sglang" / "srt" / "models"


# vLLM, for the `vllm` interface pack: one pinned release, only its model code is kept:
# the model files, and vllm/models/, where the registry (models/registry.py) puts some
# of the architectures a wrapper asks for by name (DeepseekV32ForCausalLM, ...).
VLLM_VERSION = "0.33.0"
VLLM_PREFIXES = ("vllm/model_executor/models/", "vllm/models/")


def vllm_root(version: str = VLLM_VERSION) -> Path:
    """The import root holding `vllm/` of a vLLM release (its model code only).

    The wheel is large (about 340 MB), so it is deleted once its model code is extracted.
    """
    return fetch("vllm", version, VLLM_PREFIXES, ("--platform", "manylinux_2_28_x86_64"), drop_wheel=True)


def vllm_models_dir(version: str = VLLM_VERSION) -> Path:
    """vllm/model_executor/models of a vLLM release (the tree above it is the import root)."""
    return vllm_root(version) / VLLM_PREFIXES[0].rstrip("/")


def vllm_model_dirs(version: str = VLLM_VERSION) -> list[Path]:
    """Every folder of model code kept from a vLLM release: what a check of it scans."""
    return [vllm_root(version) / p.rstrip("/") for p in VLLM_PREFIXES]


if __name__ == "__main__":
    # `python scripts/fetch_sglang.py 0.5.9` prints the cached models folder of that release;
    # `python scripts/fetch_sglang.py vllm` the pinned vLLM release's.
    for version in sys.argv[1:] or ["0.5.23"]:
        print(vllm_models_dir() if version == "vllm" else models_dir(version))
