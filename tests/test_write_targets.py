"""`fix --write` never edits an installed package (site-packages, dist-packages) nobody named.

The tree here is what such a folder holds after `pip install sglang`: the package
folder inside `lib/python3.X/site-packages`. Reached without being named (no PATH,
or a PATH above a virtual environment the walk does not skip), its files are
refused; named, they are fixed like any other.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from test_hostile_input import LM, wrapper

FIXED = b"def get_embed_and_head(self):"


def eaglelint(*args, cwd, pythonpath=()):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *map(str, pythonpath)]),
                                        "NO_COLOR": "1"})


def installed(root: Path, tree: str) -> tuple[Path, Path]:
    """An installed sglang whose models folder holds a fixable wrapper: (site folder, wrapper file)."""
    site = root / "env" / "lib" / "python3.11" / tree
    models = site / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (models / "lm.py").write_bytes(LM.replace(b"class Text", b"from __future__ import annotations\n\n\nclass Text"))
    (models / "w.py").write_bytes(wrapper().replace("from lm import", "from sglang.srt.models.lm import").encode())
    return site, models / "w.py"


def own_code(root: Path) -> Path:
    (root / "mine").mkdir()
    (root / "mine" / "lm.py").write_bytes(LM)
    (root / "mine" / "w.py").write_bytes(wrapper().encode())
    return root / "mine" / "w.py"


@pytest.mark.parametrize("tree", ["site-packages", "dist-packages"])
def test_installed_files_under_a_broader_path_are_refused_and_the_rest_fixed(tmp_path, tree):
    _, installed_wrapper = installed(tmp_path, tree)
    mine = own_code(tmp_path)
    before = installed_wrapper.read_bytes()
    done = eaglelint("fix", "--write", "--no-cache", tmp_path, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert installed_wrapper.read_bytes() == before
    assert FIXED in mine.read_bytes()
    refusal = [line for line in done.stdout.splitlines() if line.startswith("not written")]
    assert len(refusal) == 1 and f"{tree}/sglang/srt/models/w.py" in refusal[0] and "installed package" in refusal[0]


@pytest.mark.parametrize("named", ["site", "models", "file"])
def test_installed_tree_named_explicitly_is_fixed(tmp_path, named):
    site, installed_wrapper = installed(tmp_path, "site-packages")
    path = {"site": site, "models": installed_wrapper.parent, "file": installed_wrapper}[named]
    done = eaglelint("fix", "--write", "--no-cache", path, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert FIXED in installed_wrapper.read_bytes()


def test_no_path_inside_an_installed_models_folder_shows_the_diff_but_writes_nothing(tmp_path):
    """With no PATH, the models folder the working directory is in is checked (see the fork
    section of README); standing inside an installed package does not name it, so its
    files are refused one by one."""
    site, installed_wrapper = installed(tmp_path, "site-packages")
    before = installed_wrapper.read_bytes()
    models = installed_wrapper.parent
    shown = eaglelint("fix", "--no-cache", cwd=models)
    assert shown.returncode == 1 and "+    def get_embed_and_head(self):" in shown.stdout  # the diff is still shown
    done = eaglelint("fix", "--write", "--no-cache", cwd=models)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    refusal = [line for line in done.stdout.splitlines() if line.startswith("not written")]
    assert len(refusal) == 1 and "w.py" in refusal[0] and "installed package" in refusal[0]
    assert installed_wrapper.read_bytes() == before
