"""Real SGLang (and one vLLM) releases: fetched from the package registry, cached, never committed.

Why a script of its own: the README's main job, the release tests and the
benchmark all need the same cached trees.

Each tree carries a marker at its root (eaglelint's FETCHED_MARKER) with the digest of
its .py files as extracted. It does two things: `eaglelint fix --write` refuses to
write into a tree that has one (fix/write_targets.py), and a tree whose files no longer
match the digest (edited by hand, or by a fix run with --allow-fetched-release) is
extracted again here, so the tests always read the release as released.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from eaglelint.fix.write_targets import FETCHED_MARKER

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
    if _covers(root / ".complete", prefixes) and intact(root):
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
        (tmp / FETCHED_MARKER).write_text(json.dumps({
            "package": package, "version": version, "wheel": found[0].name, "prefixes": list(prefixes),
            "digest": tree_digest(tmp)}, indent=2) + "\n")
        (tmp / ".complete").write_text("".join(f"{p}\n" for p in prefixes))
        tmp.chmod(0o755)  # mkdtemp makes it private; the cache is read like any other folder
        if _covers(root / ".complete", prefixes) and intact(root):
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


def _python_files(root: Path) -> list[tuple[str, tuple[int, int, int, int]]]:
    """The tree's .py files (what eaglelint reads), bytecode caches left out, in a fixed
    order: each path relative to `root`, with its size, mtime, ctime and inode."""
    out = []

    def scan(folder: str, prefix: str) -> None:
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        scan(entry.path, f"{prefix}{entry.name}/")
                elif entry.name.endswith(".py"):
                    st = entry.stat(follow_symlinks=False)
                    out.append((prefix + entry.name, (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)))

    scan(str(root), "")
    return sorted(out)


def tree_digest(root: Path) -> str:
    """One digest of the names and bytes of every .py file under `root`."""
    digest = hashlib.sha256()
    for name, _ in _python_files(root):
        raw = name.encode()
        digest.update(len(raw).to_bytes(8, "little") + raw + hashlib.sha256((root / name).read_bytes()).digest())
    return digest.hexdigest()


_VERIFIED: dict[Path, list] = {}  # tree -> the status of its files when its digest last matched


def intact(root: Path) -> bool:
    """Whether the tree holds exactly the files its marker's digest was taken of. A tree
    fetched before markers held a digest is not known to be intact. Within one process,
    a tree whose files' status (size, mtime, ctime, inode) is unchanged since its digest
    last matched is not read again: any write moves the ctime."""
    try:
        recorded = json.loads((root / FETCHED_MARKER).read_text())["digest"]
        status = _python_files(root)
        if _VERIFIED.get(root) == status:
            return True
        if tree_digest(root) != recorded:
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    _VERIFIED[root] = status
    return True


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
