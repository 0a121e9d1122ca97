"""`eaglelint clean` removes the summary cache and keeps the cache tag while anything else
is kept; `clean --all` also removes what the demo and the tests fetched and built there,
each item named with its size.

The fetched release and the runtime tier's folders are made where the repository's own
scripts put them (fetch_sglang.fetch, runtime_venv.venv_dir, gpu_carry.build_archive's
folder names), so a script renaming its folder makes this fail instead of leaving
gigabytes behind.
"""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import fetch_sglang
import pytest
from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "scripts" / "runtime"))
import gpu_carry  # scripts/runtime is not a package: found through the path set above
import runtime_venv

MB = 1_000_000


def eaglelint(*args, env):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env})


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """$XDG_CACHE_HOME/eaglelint holding a summary cache, a fetched release and its wheel,
    two runtime venvs (one with its lock file), the GPU archive and its wheels."""
    for name in ("EAGLELINT_RELEASES", "EAGLELINT_RUNTIME_CACHE", "EAGLELINT_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "eaglelint"
    done = eaglelint("check", FIXTURES / "check", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 1 and list(root.glob("v-*"))
    wheels = fetch_sglang.cache_root() / "wheels"
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "sglang-9.9-py3-none-any.whl", "w") as zf:
        zf.writestr("sglang/srt/models/m.py", "x = 1\n")
    fetch_sglang.release_root("9.9")
    for version in ("0.5.9", "0.5.23"):
        venv = runtime_venv.venv_dir(version)
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").write_bytes(b"\0" * (2 * MB))
    runtime_venv.venv_dir("0.5.9").with_name(runtime_venv.venv_dir("0.5.9").name + ".lock").touch()
    archive = gpu_carry.cache_root() / f"gpu-carry-{gpu_carry.digest()}"
    archive.mkdir()
    (archive / "site.tar.xz").write_bytes(b"\0" * MB)
    (gpu_carry.cache_root() / "gpu-wheels").mkdir()
    (root / "notes.txt").write_text("the user's")
    return root


def sizes(stdout: str) -> dict[str, float]:
    """Path -> megabytes, from the lines listing what was removed."""
    out = {}
    for size, unit, path in re.findall(r"^\s+([\d.]+) (B|KB|MB|GB)\s+.*?\s(/\S+)$", stdout, re.M):
        out[path] = float(size) * {"B": 1e-6, "KB": 1e-3, "MB": 1, "GB": 1e3}[unit]
    return out


def test_clean_removes_the_summary_cache_only_and_keeps_the_tag(cache):
    done = eaglelint("clean", env={})
    assert done.returncode == 0, done.stderr
    assert not list(cache.glob("v-*"))
    assert sorted(p.name for p in cache.iterdir()) == sorted([
        "CACHEDIR.TAG", "notes.txt", "releases", "gpu-wheels", f"gpu-carry-{gpu_carry.digest()}",
        runtime_venv.venv_dir("0.5.9").name, runtime_venv.venv_dir("0.5.9").name + ".lock",
        runtime_venv.venv_dir("0.5.23").name])
    assert (cache / "releases" / "sglang-9.9").is_dir()
    assert "clean --all" in done.stdout  # what is kept, and how to remove it, is said


def test_clean_all_removes_what_the_scripts_built_and_names_each_with_its_size(cache):
    done = eaglelint("clean", "--all", env={})
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in cache.iterdir()) == ["CACHEDIR.TAG", "notes.txt"]  # the user's file stays
    listed = sizes(done.stdout)
    venv = str(runtime_venv.venv_dir("0.5.9"))
    assert set(listed) >= {venv, str(runtime_venv.venv_dir("0.5.23")), str(cache / "releases" / "sglang-9.9"),
                           str(cache / "releases" / "wheels"), str(cache / f"gpu-carry-{gpu_carry.digest()}"),
                           str(cache / "gpu-wheels")}
    assert listed[venv] >= 2.0 and listed[str(cache / f"gpu-carry-{gpu_carry.digest()}")] >= 1.0


def test_clean_all_of_a_folder_left_with_only_its_tag_removes_the_folder(cache):
    (cache / "notes.txt").unlink()
    assert eaglelint("clean", "--all", env={}).returncode == 0
    assert not cache.exists()


def test_clean_all_finds_the_releases_and_venvs_where_the_environment_moved_them(tmp_path, cache, monkeypatch):
    """EAGLELINT_RELEASES and EAGLELINT_RUNTIME_CACHE move what the scripts build; clean follows."""
    moved = tmp_path / "elsewhere"
    monkeypatch.setenv("EAGLELINT_RELEASES", str(moved / "releases"))
    monkeypatch.setenv("EAGLELINT_RUNTIME_CACHE", str(moved / "runtime"))
    (moved / "releases" / "wheels").mkdir(parents=True)
    (moved / "releases" / "wheels" / "sglang-9.9-py3-none-any.whl").write_bytes(
        (cache / "releases" / "wheels" / "sglang-9.9-py3-none-any.whl").read_bytes())
    fetch_sglang.release_root("9.9")
    (runtime_venv.venv_dir("0.5.9") / "bin").mkdir(parents=True)
    env = {"EAGLELINT_RELEASES": str(moved / "releases"), "EAGLELINT_RUNTIME_CACHE": str(moved / "runtime")}
    assert eaglelint("clean", "--all", env=env).returncode == 0
    assert not (moved / "releases" / "sglang-9.9").exists() and not runtime_venv.venv_dir("0.5.9").exists()
    assert (cache / "releases" / "sglang-9.9").is_dir()  # not where the environment points: not this run's


def test_clean_with_nothing_there_says_so(tmp_path):
    done = eaglelint("clean", "--all", env={"XDG_CACHE_HOME": str(tmp_path / "none"),
                                            "EAGLELINT_RELEASES": "", "EAGLELINT_RUNTIME_CACHE": ""})
    assert done.returncode == 0 and "No eaglelint cache" in done.stdout
    assert Path(tmp_path).is_dir() and not (tmp_path / "none").exists()
