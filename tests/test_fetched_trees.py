"""A release tree fetched for the demo and the tests (scripts/fetch_sglang.py) is never a
fix target unless asked for with --allow-fetched-release, and a check of one does not
print a command that writes into it.

The tree is fetched here from a local wheel (nothing is downloaded), so it carries the
marker the real fetch writes; the tree is known by that marker, not by its path.
"""

import os
import shutil
import subprocess
import sys
import zipfile

import fetch_sglang
import pytest
from conftest import REPO
from test_hostile_input import LM, wrapper

from eaglelint.fix.write_targets import FETCHED_MARKER

FIXED = b"def get_embed_and_head(self):"
VERSION = "9.9"


def eaglelint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})


@pytest.fixture
def fetched(tmp_path, monkeypatch):
    """(the fetched tree's root, its wrapper file with a fixable gap)."""
    releases = tmp_path / "releases"
    monkeypatch.setenv("EAGLELINT_RELEASES", str(releases))
    (releases / "wheels").mkdir(parents=True)
    with zipfile.ZipFile(releases / "wheels" / f"sglang-{VERSION}-py3-none-any.whl", "w") as zf:
        zf.writestr("sglang/srt/models/lm.py", LM)
        zf.writestr("sglang/srt/models/w.py", wrapper().replace("from lm import", "from sglang.srt.models.lm import"))
    root = fetch_sglang.release_root(VERSION)
    return root, root / "sglang" / "srt" / "models" / "w.py"


@pytest.mark.parametrize("command", [("fix", "--write"), ("check", "--fix"), ("check", "--add-noqa")])
def test_a_fetched_release_is_not_written_even_when_named(tmp_path, fetched, command):
    root, w = fetched
    before = w.read_bytes()
    done = eaglelint(*command, "--no-cache", w.parent, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert w.read_bytes() == before
    assert str(root) in done.stdout + done.stderr and "--allow-fetched-release" in done.stdout + done.stderr


def test_allow_fetched_release_writes_it_and_the_next_fetch_restores_it(tmp_path, fetched):
    root, w = fetched
    before = w.read_bytes()
    done = eaglelint("fix", "--write", "--no-cache", "--allow-fetched-release", w.parent, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert FIXED in w.read_bytes()
    assert fetch_sglang.release_root(VERSION) == root
    assert w.read_bytes() == before


def test_decided_by_the_marker_not_the_path(tmp_path, fetched):
    """The same tree copied without its marker is one's own code, fixed; with the marker
    alone, in a folder named nothing like a cache, it is refused."""
    root, _ = fetched
    mine = tmp_path / "mine" / "releases" / root.name
    shutil.copytree(root, mine, ignore=shutil.ignore_patterns(FETCHED_MARKER))
    done = eaglelint("fix", "--write", "--no-cache", mine, cwd=tmp_path)
    assert done.returncode == 0 and FIXED in (mine / "sglang/srt/models/w.py").read_bytes()
    other = tmp_path / "work"
    shutil.copytree(root, other)
    refused = eaglelint("fix", "--write", "--no-cache", other, cwd=tmp_path)
    assert refused.returncode == 1 and FIXED not in (other / "sglang/srt/models/w.py").read_bytes()


def test_a_check_of_a_fetched_release_prints_no_command_that_writes_into_it(tmp_path, fetched):
    """Paths are shown relative to the working directory (tmp_path), as a user reads them."""
    root, w = fetched
    done = eaglelint("check", "--no-cache", w.parent, cwd=tmp_path)
    assert done.returncode == 1
    shown = os.path.relpath(root, tmp_path)
    assert shown in done.stdout  # the findings are reported
    writes = [line for line in done.stdout.splitlines() if "fix --write" in line or "eaglelint-fix" in line]
    assert writes and not [line for line in writes if shown in line]
    own = tmp_path / "own"
    shutil.copytree(root, own, ignore=shutil.ignore_patterns(FETCHED_MARKER))
    mine = eaglelint("check", "--no-cache", own / "sglang/srt/models", cwd=tmp_path)
    assert "eaglelint fix --write own/sglang/srt/models/w.py" in mine.stdout


def test_one_report_judges_each_file_by_the_marked_folder_above_its_resolved_path(tmp_path, fetched):
    """One check over one's own copy, the fetched release and a link to a fetched file: the
    folders above all of them are shared (and each asked for the marker once), yet each file
    is judged by its own resolved path. The fix command names the own copy's file alone: the
    files under the link lie in the fetched release once it is resolved."""
    root, w = fetched
    own = tmp_path / "own"
    shutil.copytree(root, own, ignore=shutil.ignore_patterns(FETCHED_MARKER))
    links = tmp_path / "links" / "sglang" / "srt"
    links.mkdir(parents=True)
    (links / "models").symlink_to(w.parent, target_is_directory=True)
    done = eaglelint("check", "--no-cache", own / "sglang/srt/models", links / "models", w.parent, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "links/sglang/srt/models/w.py\n  4:1 EGL001" in done.stdout  # fixable findings, read through the link
    writes = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("eaglelint fix --write")]
    assert writes[0] == "eaglelint fix --write own/sglang/srt/models/w.py"
    notes = [line for line in done.stdout.splitlines() if "a release fetched for the demo" in line]
    assert len(notes) == 1 and notes[0].startswith(f"{root}:")
