"""`fix --write` never damages a tree: concurrent runs, failed writes, links, files it was not given.

The failed-rename case for one file is tests/test_fix_fixtures.py
(test_failed_rename_leaves_original_and_no_temp_file); here the CLI must go on with
the other files when one write fails.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from eaglelint import cli
from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import members as members_fix
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

CASES = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir())
LM = (FIXTURES / "fix" / "value_getter" / "lm.py").read_bytes()
WRAPPER = (FIXTURES / "fix" / "value_getter" / "wrapper.py").read_bytes()


def eaglelint_process(*args, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "eaglelint", *map(str, args)], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})


def eaglelint(*args, cwd=None) -> tuple[int, str]:
    proc = eaglelint_process(*args, cwd=cwd)
    out, err = proc.communicate()
    return proc.returncode, out + err


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under root (links not followed): file bytes, or where a link points."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = f"-> {os.readlink(path)}"
            elif path.is_file():
                out[rel] = path.read_bytes()
    return out


def tree_of_fix_cases(root: Path) -> Path:
    for case in CASES:
        shutil.copytree(case, root / case.name, ignore=shutil.ignore_patterns("*.expected"))
    return root


def test_two_concurrent_fix_processes_leave_every_file_unchanged_or_correctly_fixed(tmp_path):
    single = tree_of_fix_cases(tmp_path / "single")
    original = snapshot(single)
    eaglelint("fix", "--write", single)
    fixed = snapshot(single)
    assert sum(fixed[k] != original[k] for k in original) >= 10  # several wrapper files to race on
    for attempt in range(6):
        tree = tree_of_fix_cases(tmp_path / f"race{attempt}")
        procs = [eaglelint_process("fix", "--write", tree) for _ in range(2)]
        outputs = [p.communicate() for p in procs]
        assert not any("Traceback" in out + err for out, err in outputs)
        after = snapshot(tree)
        assert after.keys() == original.keys()  # nothing added: no temporary file left
        for rel, data in after.items():
            assert data in (original[rel], fixed[rel]), rel
        assert after == fixed  # whichever process lost a race found the file already fixed


def test_file_fixed_by_another_process_after_the_check_is_not_fixed_again(tmp_path):
    """The race the concurrent test can hit: findings from the old bytes, the file already fixed."""
    (tmp_path / "lm.py").write_bytes(LM)
    (tmp_path / "wrapper.py").write_bytes(WRAPPER)
    project = Project()
    findings = check_files(sorted(tmp_path.glob("*.py")), CheckOptions(tuple(select_interfaces(None))),
                           project).findings
    fixed_elsewhere = (FIXTURES / "fix" / "value_getter" / "wrapper.py.expected").read_bytes()
    (tmp_path / "wrapper.py").write_bytes(fixed_elsewhere)
    plan = fixmod.plan_fixes(findings, project)
    assert plan.files == [] and {f.method for f, _ in plan.left} == {"get_embed_and_head", "set_embed_and_head"}
    assert (tmp_path / "wrapper.py").read_bytes() == fixed_elsewhere


def test_failed_write_of_one_file_is_reported_and_the_others_are_written(tmp_path, monkeypatch, capsys):
    tree = tree_of_fix_cases(tmp_path)
    target = tree / "value_getter" / "wrapper.py"
    before = target.read_bytes()
    real_replace = os.replace

    def replace(src, dst):
        if Path(dst) == target:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(fixmod.os, "replace", replace)
    monkeypatch.setattr(sys, "argv", ["eaglelint", "fix", "--write", str(tree)])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out = capsys.readouterr().out
    assert exit_.value.code == 1 and "Traceback" not in out
    assert "not written" in out and "value_getter/wrapper.py" in out
    assert target.read_bytes() == before
    assert (tree / "keyword_only" / "wrapper.py").read_bytes() == (
        FIXTURES / "fix" / "keyword_only" / "wrapper.py.expected").read_bytes()
    assert not list(tree.rglob("*.eaglelint"))


def test_edit_that_would_not_land_in_its_class_is_not_planned(tmp_path, monkeypatch):
    (tmp_path / "lm.py").write_bytes(LM)
    (tmp_path / "wrapper.py").write_bytes(WRAPPER)
    monkeypatch.setattr(members_fix, "indentation", lambda lines, node: ("", "    "))  # as if mis-measured
    monkeypatch.setattr(members_fix, "indentation_at", lambda lines, line, body_line: ("", "    "))
    project = Project()
    findings = check_files(sorted(tmp_path.glob("*.py")), CheckOptions(tuple(select_interfaces(None))),
                           project).findings
    plan = fixmod.plan_fixes(findings, project)
    assert plan.files == [] and {f.method for f, _ in plan.left} == {"get_embed_and_head", "set_embed_and_head"}


def _outside_and_tree(tmp_path: Path) -> tuple[Path, Path]:
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    for d in (outside, tree):
        d.mkdir()
        (d / "lm.py").write_bytes(LM)
    (outside / "wrapper.py").write_bytes(WRAPPER)
    return outside, tree


def test_symlinked_wrapper_file_pointing_outside_is_checked_but_not_rewritten(tmp_path):
    outside, tree = _outside_and_tree(tmp_path)
    (tree / "wrapper.py").symlink_to(outside / "wrapper.py")
    before = snapshot(tmp_path)
    code, out = eaglelint("check", tree)
    assert code == 1 and "GetterWrapper" in out
    code, out = eaglelint("fix", "--write", tree)
    assert "Traceback" not in out and "symbolic link" in out
    assert snapshot(tmp_path) == before


def test_directory_link_out_of_the_tree_is_read_but_never_written(tmp_path):
    outside, tree = _outside_and_tree(tmp_path)
    (tree / "linked").symlink_to(outside, target_is_directory=True)
    before = snapshot(tmp_path)
    code, out = eaglelint("check", tree)
    assert code == 1 and "GetterWrapper" in out
    code, out = eaglelint("fix", "--write", tree)
    assert "Traceback" not in out and "outside the given paths" in out
    assert snapshot(tmp_path) == before


def test_given_path_that_is_a_link_is_fixed_where_it_points(tmp_path):
    """A link the user names is the user's choice; only links met inside it are distrusted."""
    outside, _ = _outside_and_tree(tmp_path)
    (tmp_path / "named").symlink_to(outside, target_is_directory=True)
    eaglelint("fix", "--write", tmp_path / "named")
    assert (outside / "wrapper.py").read_bytes() == (
        FIXTURES / "fix" / "value_getter" / "wrapper.py.expected").read_bytes()


def test_files_outside_the_given_path_are_read_for_resolution_but_never_written(tmp_path):
    models, other = tmp_path / "pkg" / "models", tmp_path / "pkg" / "other"
    models.mkdir(parents=True)
    other.mkdir()
    (other / "lm.py").write_bytes(LM)
    given = models / "wrapper.py"
    given.write_bytes(WRAPPER.replace(b"from lm import", b"from pkg.other.lm import"))
    (models / "sibling.py").write_bytes(WRAPPER.replace(b"from lm import", b"from pkg.other.lm import"))
    before = snapshot(tmp_path)
    code, out = eaglelint("fix", "--write", given)
    assert code == 0, out
    after = snapshot(tmp_path)
    assert after.keys() == before.keys()
    changed = {rel for rel in before if before[rel] != after[rel]}
    assert changed == {"pkg/models/wrapper.py"}  # not sibling.py, not lm.py, no temporary file
    assert b"return self.language_model.get_embed_and_head()" in given.read_bytes()
