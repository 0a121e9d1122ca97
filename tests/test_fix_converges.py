"""One `fix --write` (or `check --fix`) leaves nothing fixable: it plans again on what it
wrote until a pass writes nothing, bounded as ruff bounds its fix loop.

The case: fixtures/fix/held_wrapper_chain, where OmniWrapper's gap exists only once
ThinkerWrapper, the model it holds, has been fixed (0.5.9's Qwen3-Omni holding its
Qwen3-VL thinker). Its exact output is checked by test_fix_fixtures.py."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES

CASE = FIXTURES / "fix" / "held_wrapper_chain"
CHAIN = [("ThinkerWrapper", m) for m in ("set_eagle3_layers_to_capture", "get_embed_and_head")] + \
        [("OmniWrapper", m) for m in ("set_eagle3_layers_to_capture", "get_embed_and_head")]


def eaglelint(*args, cwd, prelude=""):
    """The CLI in a fresh process; `prelude` runs first (to lower the pass bound)."""
    code = f"{prelude}\nfrom eaglelint.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)})


@pytest.fixture
def work(tmp_path):
    target = tmp_path / "case"
    shutil.copytree(CASE, target, ignore=shutil.ignore_patterns("*.expected"))
    return target


def fixable(work) -> list[tuple[str, str]]:
    """(class, member) of every finding marked fixable, sorted."""
    done = eaglelint("check", "--no-cache", "--output-format", "json", ".", cwd=work)
    return sorted((f["class"], f["method"]) for f in json.loads(done.stdout) if f["fixable"])


def test_before_any_fix_only_the_inner_wrapper_is_fixable(work):
    """The premise: the outer gap is not visible until the inner one is fixed."""
    assert fixable(work) == sorted(CHAIN[:2])


def test_fix_write_reaches_the_fixed_point_in_one_run_and_counts_each_member_once(work):
    done = eaglelint("fix", "--write", "--no-cache", "--show-fixes", ".", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert fixable(work) == []
    assert (work / "wrapper.py").read_bytes() == (CASE / "wrapper.py.expected").read_bytes()
    counts = re.search(r"Added (\d+) methods in (\d+) file", done.stdout)
    assert counts and (int(counts[1]), int(counts[2])) == (len(CHAIN), 1)
    listed = re.findall(r"(\w+)\.(\w+)", done.stdout.split("wrapper.py:", 1)[1])
    assert sorted(listed) == sorted(CHAIN)


def test_check_fix_reaches_the_fixed_point_and_reports_nothing_left(work):
    done = eaglelint("check", "--fix", "--no-cache", "--output-format", "json", ".", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []
    assert (work / "wrapper.py").read_bytes() == (CASE / "wrapper.py.expected").read_bytes()


def test_a_fix_that_does_not_settle_within_the_bound_says_so_and_fails(work):
    """With the bound lowered to one pass, the outer gap found by the second run is left,
    the run says it did not converge, and exits 1."""
    done = eaglelint("fix", "--write", "--no-cache", ".", cwd=work,
                     prelude="import eaglelint.fix.run as run; run.MAX_PASSES = 1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "converge" in done.stdout
    assert fixable(work) == sorted(CHAIN[2:])
    settled = eaglelint("fix", "--write", "--no-cache", ".", cwd=work)
    assert settled.returncode == 0 and "converge" not in settled.stdout
    assert fixable(work) == []


SPY_PASSES = """
import gc, weakref
import eaglelint.analysis.python.project as project_module
import eaglelint.fix.run as fix_run
made = []
make = project_module.Project.__init__
def tracked(self, *args, **kwargs):
    make(self, *args, **kwargs)
    made.append(weakref.ref(self))
project_module.Project.__init__ = tracked
plan = fix_run.plan
def spy(result, project, roots):
    print('pass: projects alive', sum(r() is not None for r in made), 'collector', gc.isenabled(), flush=True)
    return plan(result, project, roots)
fix_run.plan = spy
"""


def test_each_pass_frees_the_project_of_the_pass_before(work):
    """The command line runs without the cycle collector (cli/main.py): a fix run that checks
    again after each write frees the previous pass's project (a cycle) before the next, so a
    run of many passes holds two projects (the first check's, which the command keeps, and
    the current one), not one per pass."""
    done = eaglelint("fix", "--write", "--no-cache", ".", cwd=work, prelude=SPY_PASSES)
    passes = [line for line in done.stdout.splitlines() if line.startswith("pass:")]
    assert len(passes) == 3, done.stdout + done.stderr  # two that write, one that finds nothing
    assert passes == [f"pass: projects alive {n} collector False" for n in (1, 2, 2)]
