"""The packages the GPU run carries to the GPU machine, as one compressed archive that fits one copy.

Why one archive: the copy to the GPU machine holds at most 64 MiB (tracked tree, untracked
files that git does not ignore, and the carried paths together), and a machine
goes back 30 s after a call, so a second call cannot rely on the first one's
unpacked wheels. The packages the image lacks (pins/gpu-sglang-0.5.17.txt) are
installed here into one folder for CPython 3.12 (pip --target, --no-deps), the
parts the run never loads are dropped (TRIM), and the folder travels as one
.tar.xz: Python source and C++ headers shrink about tenfold.

    python scripts/runtime/gpu_carry.py build          # build (cached) and copy into .gpu-carry/
    python scripts/runtime/gpu_carry.py size           # bytes a call carrying .gpu-carry/ would send
    python scripts/runtime/gpu_carry.py unpack .gpu-carry /tmp/site   # on the GPU machine

Standard library only: `unpack` runs under the GPU image's python3.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PINS = HERE / "pins" / "gpu-sglang-0.5.17.txt"
CARRY = ".gpu-carry"  # ignored by .gitignore; copied to the GPU machine with the tree
ARCHIVE, MANIFEST = "site.tar.xz", "manifest.json"
LIMIT = 64 * 1024 * 1024  # what one copy to the GPU machine may hold
# The image's CPython 3.12 on x86-64 (KINDS.md: Python 3.12.3); pip matches each manylinux tag exactly.
PLATFORM = ["--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
            *(arg for tag in ("manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_27_x86_64",
                              "manylinux_2_28_x86_64", "manylinux_2_34_x86_64") for arg in ("--platform", tag))]
# Dropped after install: never loaded with triton attention and pytorch sampling on an sm90 GPU.
TRIM = (
    "sgl_kernel/flash_ops",      # FlashAttention 3 (1.1 GB): loaded by the fa3 backend only
    "sgl_kernel/sm100/",         # the Blackwell build of the common ops; an H200 loads sm90/
    "sgl_kernel/infllm_ops",     # InfLLM and FlashMLA backends only
    "sgl_kernel/flashmla_ops",
    "xgrammar/lib/",             # libxgrammar.a, a static library for building against xgrammar
    "bin/",                      # console scripts
)
FORMAT = 1  # bump when the archive's layout changes


def cache_root() -> Path:
    sys.path.insert(0, str(HERE))
    from runtime_venv import cache_root as root

    return root()


def digest() -> str:
    """What the archive is built from: the pin list, the trim list and the format."""
    return hashlib.sha256(PINS.read_bytes() + repr((TRIM, FORMAT)).encode()).hexdigest()[:16]


def pins() -> list[str]:
    return [line.strip() for line in PINS.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join(x for x in (done.stderr + done.stdout).splitlines() if "is ignored" not in x)
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed (exit {done.returncode}):\n{tail[-3000:]}")


def build_archive() -> Path:
    """cache/gpu-carry-<digest>/ holding site.tar.xz and manifest.json; built once per digest."""
    out = cache_root() / f"gpu-carry-{digest()}"
    if (out / MANIFEST).is_file():
        return out
    wheels = cache_root() / "gpu-wheels"
    _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", *PLATFORM, "-d", str(wheels), "-r", str(PINS)])
    from trim_kernel_wheel import trim

    with tempfile.TemporaryDirectory() as tmp:
        chosen = []
        for pin in pins():
            name, version = pin.split("==")
            stem = f"{name.replace('-', '_').lower()}-{version}-"
            found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(stem)]
            if len(found) != 1:
                raise RuntimeError(f"expected one wheel for {pin} in {wheels}, found {[w.name for w in found]}")
            chosen.append(trim(found[0], Path(tmp) / "trimmed") if name == "sglang-kernel" else found[0])
        site = Path(tmp) / "site"
        _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile", *PLATFORM,
              "--target", str(site), *map(str, chosen)])
        for rel in TRIM:
            for path in site.glob(rel.rstrip("/") + ("" if rel.endswith("/") else "*")):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        unpacked = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
        part = out.with_name(out.name + ".part")
        shutil.rmtree(part, ignore_errors=True)
        part.mkdir(parents=True)
        with open(part / ARCHIVE, "wb") as fh:  # xz on every core; the box builds it once per pin list
            tar = subprocess.Popen(["tar", "-C", str(site), "--sort=name", "-cf", "-", "."], stdout=subprocess.PIPE)
            subprocess.run(["xz", "-6", "-T0"], stdin=tar.stdout, stdout=fh, check=True)
            if tar.wait() != 0:
                raise RuntimeError("tar failed")
    manifest = {"pins": PINS.name, "digest": digest(), "packages": pins(), "trim": list(TRIM),
                "archive_bytes": (part / ARCHIVE).stat().st_size, "unpacked_bytes": unpacked}
    (part / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    part.rename(out)
    return out


def build(repo: Path = REPO) -> Path:
    """The carry folder in `repo`, copied from the cached archive (rebuilt when the pins change)."""
    src, dst = build_archive(), repo / CARRY
    if not ((dst / MANIFEST).is_file() and (dst / MANIFEST).read_text() == (src / MANIFEST).read_text()
            and (dst / ARCHIVE).stat().st_size == (src / ARCHIVE).stat().st_size):
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
    return dst


def _git_files(repo: Path, *args: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(repo), "ls-files", "-z", *args], capture_output=True, text=True,
                          check=True)
    return [p for p in done.stdout.split("\0") if p]


def travel_bytes(repo: Path = REPO, carry: tuple[str, ...] = (CARRY,)) -> dict[str, int]:
    """Bytes copied to the GPU machine: tracked files, untracked files git does not ignore, shared/, carried paths.

    Each file counts once (shared/ is often untracked too); a link counts as a link, as it travels.
    """
    def walk(rel: str) -> set[str]:
        root = repo / rel
        if root.is_dir() and not root.is_symlink():
            return {str(p.relative_to(repo)) for p in root.rglob("*") if p.is_symlink() or not p.is_dir()}
        return {rel} if os.path.lexists(root) else set()

    parts = {"tracked": set(_git_files(repo)), "untracked": set(_git_files(repo, "--others", "--exclude-standard")),
             "shared": walk("shared")} | {f"carry:{c}": walk(c) for c in carry}
    seen: set[str] = set()
    out = {}
    for name, paths in parts.items():
        fresh = {p for p in paths - seen if os.path.lexists(repo / p)}  # a deleted tracked file does not travel
        out[name] = sum(os.lstat(repo / p).st_size for p in fresh)
        seen |= fresh
    out["total"] = sum(out.values())
    return out


def unpack(carry: Path, site: Path) -> dict:
    """Extract the archive into `site` after checking it was built from this checkout's pin list."""
    manifest = json.loads((carry / MANIFEST).read_text())
    if manifest.get("digest") != digest():
        raise SystemExit(f"{carry} was built from another pin list (digest {manifest.get('digest')}, "
                         f"this checkout {digest()}): run `python scripts/runtime/gpu_carry.py build` and carry it")
    start = time.monotonic()
    site.mkdir(parents=True, exist_ok=True)
    with tarfile.open(carry / ARCHIVE, "r:xz") as tar:
        tar.extractall(site, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(site)
    return {"site": str(site), "packages": len(manifest["packages"]), "seconds": round(time.monotonic() - start, 1)}


def main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        dst = build()
        print(json.dumps({"carry": str(dst), **json.loads((dst / MANIFEST).read_text()),
                          "travel": travel_bytes()}, indent=2))
    elif argv[:1] == ["size"]:
        sizes = travel_bytes()
        print(json.dumps(sizes, indent=2))
        return 0 if sizes["total"] <= LIMIT else 1
    elif argv[:1] == ["unpack"] and len(argv) == 3:
        print(json.dumps(unpack(Path(argv[1]), Path(argv[2]))))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
