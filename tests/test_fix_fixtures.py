"""`eaglelint fix` on our fixtures: each case's input, and the exact expected output beside it.

fixtures/fix/<case>/wrapper.py is the input, wrapper.py.expected the output after
`fix --write`; lm.py holds the wrapped class.
"""

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import members as members_fix
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

CASES = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir())
NOT_FIXABLE = {"property_and_classmethod", "refused_shapes", "decoder_body_refused"}  # left for a human


def eaglelint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(FIXTURES.parent)})


def copy_case(case: Path, tmp_path: Path) -> Path:
    target = tmp_path / case.name
    shutil.copytree(case, target, ignore=shutil.ignore_patterns("*.expected"))
    return target


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fix_writes_expected_output_and_is_idempotent(case, tmp_path):
    work = copy_case(case, tmp_path)
    args = (case / "args").read_text().split() if (case / "args").is_file() else []  # e.g. --interface PACKS
    first = eaglelint("fix", "--write", *args, ".", cwd=work)
    assert first.returncode == (1 if case.name in NOT_FIXABLE else 0), first.stderr
    expected = (case / "wrapper.py.expected").read_bytes()
    assert (work / "wrapper.py").read_bytes() == expected
    second = eaglelint("fix", "--write", *args, ".", cwd=work)
    assert (work / "wrapper.py").read_bytes() == expected
    assert b"Added 0 methods" in second.stdout


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fix_keeps_every_original_line_in_order(case, tmp_path):
    """What `fix --write` writes (run here, not the committed expected file) holds every
    line of the input, in order: a fix only adds. Exempt: import lines (new names may be
    merged into one) and, for a vLLM marker fix, the class headers it extends."""
    work = copy_case(case, tmp_path)
    args = (case / "args").read_text().split() if (case / "args").is_file() else []
    done = eaglelint("fix", "--write", *args, ".", cwd=work)
    assert done.returncode in (0, 1) and b"Traceback" not in done.stderr, done.stderr
    old = (case / "wrapper.py").read_bytes().splitlines(keepends=True)
    new = iter((work / "wrapper.py").read_bytes().splitlines(keepends=True))
    marker_fix = "vllm" in args or "--interface=vllm" in args
    kept = [line for line in old if not line.lstrip().startswith((b"from ", b"import "))
            and not (marker_fix and line.startswith(b"class "))]
    for line in kept:
        assert any(line == candidate for candidate in new), line  # found after the previous one
    if case.name not in NOT_FIXABLE and case.name != "already_bound":
        assert (work / "wrapper.py").read_bytes() != (case / "wrapper.py").read_bytes()


def test_diff_mode_changes_nothing_and_prints_unified_diff(tmp_path):
    work = copy_case(FIXTURES / "fix" / "value_getter", tmp_path)
    before = (work / "wrapper.py").read_bytes()
    done = eaglelint("fix", "--diff", ".", cwd=work)
    assert done.returncode == 1
    assert (work / "wrapper.py").read_bytes() == before
    assert b"+++ b/wrapper.py" in done.stdout and b"+    def get_embed_and_head" in done.stdout


def test_style_plain_never_checks_and_guard_is_silent_only_by_name(tmp_path):
    """held_class_varies: one candidate lacks the capture hook. The default raises
    (its expected file); plain calls unchecked; guard, asked for by name, skips silently."""
    work = copy_case(FIXTURES / "fix" / "held_class_varies", tmp_path)
    eaglelint("fix", "--write", "--style", "plain", ".", cwd=work)
    text = (work / "wrapper.py").read_text()
    assert "hasattr" not in text and "        self.language_model.set_eagle3_layers_to_capture(layer_ids)" in text
    work2 = copy_case(FIXTURES / "fix" / "held_class_varies", tmp_path / "b")
    eaglelint("fix", "--write", "--style", "guard", ".", cwd=work2)
    text = (work2 / "wrapper.py").read_text()
    assert 'if hasattr(self.language_model, "set_eagle3_layers_to_capture"):' in text
    assert "which has no set_eagle3_layers_to_capture" not in text


def test_fix_keeps_permission_bits(tmp_path):
    work = copy_case(FIXTURES / "fix" / "value_getter", tmp_path)
    os.chmod(work / "wrapper.py", 0o640)
    eaglelint("fix", "--write", ".", cwd=work)
    assert stat.S_IMODE((work / "wrapper.py").stat().st_mode) == 0o640


def _plan(work: Path):
    project = Project()
    files = sorted(work.glob("*.py"))
    findings = check_files(files, CheckOptions(tuple(select_interfaces(None))), project).findings
    return fixmod.plan_fixes(findings, project)


def test_failed_rename_leaves_original_and_no_temp_file(tmp_path, monkeypatch):
    work = copy_case(FIXTURES / "fix" / "value_getter", tmp_path)
    before = (work / "wrapper.py").read_bytes()
    plan = _plan(work)
    assert plan.files

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fixmod.os, "replace", broken_replace)
    with pytest.raises(fixmod.FixError):
        fixmod.write_fix(plan.files[0])
    assert (work / "wrapper.py").read_bytes() == before
    assert sorted(p.name for p in work.iterdir()) == ["lm.py", "wrapper.py"]


def test_file_changed_since_planning_is_not_overwritten(tmp_path):
    work = copy_case(FIXTURES / "fix" / "value_getter", tmp_path)
    plan = _plan(work)
    (work / "wrapper.py").write_text("# edited by someone else\n")
    with pytest.raises(fixmod.FixError, match="changed"):
        fixmod.write_fix(plan.files[0])
    assert (work / "wrapper.py").read_text() == "# edited by someone else\n"


def test_edit_that_would_not_parse_is_not_planned(tmp_path, monkeypatch):
    work = copy_case(FIXTURES / "fix" / "value_getter", tmp_path)
    monkeypatch.setattr(members_fix, "render", lambda d, indent, step: [f"{indent}def broken(:"])
    plan = _plan(work)
    assert plan.files == []
    assert plan.left and all("would not parse" in why for _, why in plan.left)


@pytest.mark.parametrize("case", [c for c in CASES if (c / "wrapper.py.expected").is_file()], ids=lambda c: c.name)
def test_fixed_imports_are_where_isort_puts_them(case, tmp_path):
    """ruff's isort rules (`I`) are the oracle: an expected output they would reorder
    means the fix needs a second round of the fork's isort hook. Run in a copy of the
    case's folder, so that `lm` (a module beside the wrapper) is first party, as isort
    finds it."""
    work = tmp_path / case.name
    shutil.copytree(case, work)
    (work / "wrapper.py").write_bytes((case / "wrapper.py.expected").read_bytes())
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "I",
                           "--diff", "wrapper.py"], capture_output=True, text=True, cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr


def test_fix_never_overrides_a_binding_even_when_check_misses_it(tmp_path, monkeypatch):
    """already_bound has each member in another form. Made to believe they are absent,
    check reports all three: fix still writes none and says why."""
    from eaglelint.checks import delegation as wrapper_check

    work = copy_case(FIXTURES / "fix" / "already_bound", tmp_path)
    monkeypatch.setattr(wrapper_check, "presence", lambda *args: False)
    plan = _plan(work)
    assert plan.files == []
    assert sorted(f.method for f, why in plan.left if "already binds" in why) == [
        "get_embed_and_head", "set_eagle3_layers_to_capture", "set_embed_and_head"]
