"""The summary/result cache and parallel parsing never change results, and notice every edit."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES
from fetch_sglang import release_root

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

OPTIONS = CheckOptions(tuple(select_interfaces(None)))
TREE = FIXTURES / "check"


def run(paths, cache_dir=None, jobs=1):
    project = Project(SummaryCache(cache_dir) if cache_dir else None)
    return check_files(discover(paths).files, OPTIONS, project, jobs).findings, project


def test_fixture_results_identical_cold_warm_parallel(tmp_path):
    plain, _ = run([TREE])
    cold, project = run([TREE], tmp_path)
    assert project.cache.misses > 0 and project.cache.hits == 0
    warm, _ = run([TREE], tmp_path)
    single, warm_project = run(sorted((TREE / "sglang/srt/models").glob("wrapper_*.py"))[:1], tmp_path)
    assert warm_project.cache.hits > 0 and warm_project.parsed == []
    parallel, _ = run([TREE], None, jobs=2)
    assert plain == cold == warm == parallel
    assert single == [f for f in plain if f.path == single[0].path]


@pytest.mark.release
def test_0_5_23_results_identical_with_cache_and_workers(tmp_path):
    root = release_root("0.5.23") / "sglang" / "srt" / "models"
    plain, _ = run([root])
    assert plain == run([root], tmp_path)[0] == run([root], tmp_path)[0] == run([root], None, jobs=2)[0]


def remove_method(path: Path, name: str) -> None:
    text = path.read_text()
    renamed = re.sub(rf"def {name}\(", f"def _removed_{name}(", text)
    assert renamed != text
    path.write_text(renamed)


@pytest.mark.release
@pytest.mark.parametrize("scope", ["one_file", "whole_tree"])
def test_editing_wrapped_module_changes_warm_result(tmp_path, scope):
    models = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(release_root("0.5.9") / "sglang" / "srt" / "models", models)
    kimi = models / "kimi_k25.py"
    paths = [kimi] if scope == "one_file" else [models]
    cache_dir = tmp_path / "cache"

    def kimi_methods():
        findings, _ = run(paths, cache_dir)
        return {f.method for f in findings if f.path.endswith("kimi_k25.py")}

    assert kimi_methods() == {"set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}
    assert kimi_methods() == {"set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}
    remove_method(models / "deepseek_v2.py", "set_eagle3_layers_to_capture")
    assert kimi_methods() == {"get_embed_and_head", "set_embed_and_head"}


def test_corrupt_cache_is_ignored_with_a_warning(tmp_path):
    cache_dir = tmp_path / "cache"
    expected, _ = run([TREE], cache_dir)
    for entry in cache_dir.rglob("*.json"):
        entry.write_bytes(b"not an entry")
    messages = []
    project = Project(SummaryCache(cache_dir, warn=messages.append))
    assert check_files(discover([TREE]).files, OPTIONS, project).findings == expected
    assert len(messages) == 1 and "cache" in messages[0]


def test_unwritable_cache_dir_warns_and_checks(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    env = {**os.environ, "PYTHONPATH": str(FIXTURES.parent)}
    done = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--output-format", "json",
                           "--cache-dir", str(blocker), str(TREE)], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert "warning" in done.stderr and "Traceback" not in done.stderr
    assert json.loads(done.stdout) == json.loads(subprocess.run(
        [sys.executable, "-m", "eaglelint", "check", "--output-format", "json", "--no-cache", str(TREE)],
        capture_output=True, text=True, env=env).stdout)


def test_no_cache_writes_nothing(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(FIXTURES.parent), "XDG_CACHE_HOME": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "eaglelint", "check", "--no-cache", str(TREE)], capture_output=True,
                   env=env)
    assert list(tmp_path.iterdir()) == []
    subprocess.run([sys.executable, "-m", "eaglelint", "check", str(TREE)], capture_output=True, env=env)
    assert list((tmp_path / "eaglelint").rglob("*.json"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_a_dependency_replaced_by_a_fifo_does_not_block_the_warm_run(tmp_path):
    """The whole-run cache re-reads the files a resolution reached outside the given ones;
    that read goes through the FIFO guard, as every other read does (a plain open() of a
    FIFO with no writer blocks forever)."""
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (models / "lm.py").write_text("class LM:\n    def get_embed_and_head(self):\n        return 1\n")
    wrapper = "from .lm import LM\n\n\nclass W{n}:\n    def __init__(self):\n        self.language_model = LM()\n"
    given = []
    for n in (1, 2):
        (models / f"w{n}.py").write_text(wrapper.format(n=n))
        given.append(models / f"w{n}.py")
    args = [sys.executable, "-m", "eaglelint", "check", "--cache-dir", str(tmp_path / "cache"), "--output-format",
            "json", *map(str, given)]
    first = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert {r["method"] for r in json.loads(first.stdout)} == {"get_embed_and_head"}
    (models / "lm.py").unlink()
    os.mkfifo(models / "lm.py")
    again = subprocess.run(args, capture_output=True, text=True, timeout=120)  # blocked forever before
    assert "Traceback" not in again.stderr
    assert "get_embed_and_head" not in {r["method"] for r in json.loads(again.stdout)}


def test_a_run_from_another_directory_is_a_cache_hit_and_shows_its_own_paths(tmp_path):
    """Findings hold absolute paths, so the working directory is not part of the run key:
    the same tree checked from a second directory comes from the cache (no entry is added,
    where a miss writes the run's result), and each run shows paths relative to its own."""
    models = tmp_path / "proj" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (models / "lm.py").write_text("class LM:\n    def get_embed_and_head(self):\n        return 1\n")
    (models / "wrapper.py").write_text(
        "from .lm import LM\n\n\nclass W:\n    def __init__(self):\n        self.language_model = LM()\n")
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(FIXTURES.parent)}

    def check(cwd: Path, target: str, output_format: str = "json") -> str:
        done = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--cache-dir", str(cache_dir),
                               "--output-format", output_format, target], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=120)
        assert done.returncode == 1, done.stderr
        return done.stdout

    def entries() -> set[Path]:
        return {p for p in cache_dir.rglob("*") if p.is_file()}

    first = json.loads(check(tmp_path / "proj", "sglang"))
    cold = entries()
    second = json.loads(check(tmp_path / "proj" / "sglang" / "srt", "models"))
    assert entries() == cold  # a miss would have written this run's result
    assert [(r["path"], r["wrapped_path"], r["method"]) for r in first] == [
        ("sglang/srt/models/wrapper.py", "sglang/srt/models/lm.py", "get_embed_and_head")]
    assert [(r["path"], r["wrapped_path"], r["method"]) for r in second] == [
        ("models/wrapper.py", "models/lm.py", "get_embed_and_head")]
    concise = check(tmp_path / "proj" / "sglang", "srt/models", "concise")
    assert entries() == cold
    assert concise.startswith("srt/models/wrapper.py:4:1: ")
