"""What a team keeping eaglelint switched on in a fork types, as ruff and pylint users
type it: exit codes by severity, code selection, fix modes, adopting it on a tree with
existing gaps, fixing dependents, and which tree is checked when no PATH is given."""

import json
import shlex
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO
from test_cli import run

CHECK = FIXTURES / "check" / "sglang" / "srt" / "models"
DEPENDENTS = FIXTURES / "dependents" / "sglang" / "srt" / "models"
WRAPPER = "wrapper_plain_assign.py"  # PlainWrapperForConditionalGeneration: EGL001 x2, EGL002, class line 8
UNRESOLVED = CHECK / "unresolved_wrapped.py"  # EGL010 (info) only
LAYOUT = Path("python/sglang/srt/models")


@pytest.fixture
def fork(tmp_path):
    """A checkout laid out as SGLang's repository, with the wrapper and its language model."""
    models = tmp_path / LAYOUT
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", WRAPPER):
        shutil.copy(CHECK / name, models / name)
    return tmp_path


def codes(done) -> list[str]:
    assert done.returncode in (0, 1), done.stderr
    return sorted(r["code"] for r in json.loads(done.stdout))


def json_check(*args, cwd=None):
    return run("check", "--output-format", "json", *args, cwd=cwd)


# 1. severities that fail a run


def test_info_findings_do_not_fail_a_run_unless_fail_on_names_them(fork):
    done = run("check", UNRESOLVED)
    assert done.returncode == 0 and "EGL010" in done.stdout
    assert run("check", "--fail-on", "info", UNRESOLVED).returncode == 1
    assert run("check", "--fail-on", "error", CHECK / WRAPPER).returncode == 1
    assert run("check", "--fail-on", "error", "--select", "EGL002", CHECK / WRAPPER).returncode == 0
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nfail-on = ["error"]\nselect = ["EGL002"]\n')
    assert run("check", fork / LAYOUT).returncode == 0
    bad = run("check", "--fail-on", "fatal", UNRESOLVED)
    assert bad.returncode == 2 and "fatal" in bad.stderr


# 7. --interface all


def test_interface_all_in_check_fix_and_config(fork):
    path = CHECK / "EGL003_pp_properties.py"
    found = codes(json_check("--interface", "all", path))
    assert "EGL003" in found and "EGL001" in found
    assert codes(json_check(path)) == []  # the default pack (EAGLE-3) has nothing to say here
    shutil.copy(path, fork / LAYOUT / "pp.py")
    shutil.copy(CHECK / "pp_lm.py", fork / LAYOUT / "pp_lm.py")
    diff = run("fix", "--interface", "all", fork / LAYOUT / "pp.py")
    assert diff.returncode == 1 and "def start_layer" in diff.stdout
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\ninterfaces = ["all"]\n')
    assert "EGL003" in codes(json_check(fork / LAYOUT / "pp.py"))


# 8. ruff's habits


def test_select_takes_prefixes_and_all(fork):
    path = CHECK / WRAPPER
    assert codes(json_check("--select", "EGL0", path)) == ["EGL001", "EGL001", "EGL002"]
    assert codes(json_check("--select", "ALL", path)) == ["EGL001", "EGL001", "EGL002"]
    assert codes(json_check("--select", "egl00", "--ignore", "EGL001", path)) == ["EGL002"]
    assert codes(json_check("--select", "EGL9", path)) == []
    assert run("check", "--select", "EGL7", path).returncode == 2


def test_extend_select_and_ignore_add_to_the_config_while_select_and_ignore_replace_it(fork):
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nselect = ["EGL001"]\n')
    models = fork / LAYOUT
    assert codes(json_check(models)) == ["EGL001", "EGL001"]
    assert codes(json_check("--extend-select", "EGL002", models)) == ["EGL001", "EGL001", "EGL002"]
    assert codes(json_check("--select", "EGL002", models)) == ["EGL002"]
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nignore = ["EGL002"]\n')
    assert codes(json_check("--extend-ignore", "EGL001", models)) == []
    assert codes(json_check("--ignore", "EGL001", models)) == ["EGL002"]
    assert codes(json_check("--extend-select", "EGL002", models)) == ["EGL001", "EGL001", "EGL002"]


def test_fix_diff_exits_1_only_when_it_would_change_something(fork):
    would = run("fix", "--diff", fork / LAYOUT)
    assert would.returncode == 1 and "+    def get_embed_and_head(" in would.stdout
    assert run("fix", "--diff", CHECK / "ok_delegating.py").returncode == 0
    nothing = run("fix", "--diff", UNRESOLVED)  # an info finding, nothing to write
    assert nothing.returncode == 0 and nothing.stdout == ""


def test_check_fix_writes_then_reports_what_is_left_and_show_fixes_lists_it(fork):
    path = fork / LAYOUT / WRAPPER
    done = run("check", "--fix", "--show-fixes", path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PlainWrapperForConditionalGeneration.get_embed_and_head" in done.stdout
    assert "PlainWrapperForConditionalGeneration.set_embed_and_head" in done.stdout
    assert "def set_eagle3_layers_to_capture(" in path.read_text()
    assert run("check", path).returncode == 0


def test_fix_write_show_fixes_lists_each_member(fork):
    done = run("fix", "--write", "--show-fixes", fork / LAYOUT)
    assert done.returncode == 0
    assert f"{WRAPPER}: PlainWrapperForConditionalGeneration." in done.stdout


def test_config_error_is_one_line_without_the_usage_banner(fork):
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nselct = ["EGL001"]\n')
    done = run("check", fork / LAYOUT)
    assert done.returncode == 2 and "selct" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Usage:" not in done.stderr


@pytest.mark.parametrize("name", ["eaglelint.toml", ".eaglelint.toml"])
def test_eaglelint_toml_beside_pyproject_wins(fork, name):
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nignore = ["EGL002"]\n')
    (fork / name).write_text('ignore = ["EGL001"]\n')
    assert codes(json_check(fork / LAYOUT)) == ["EGL002"]


# 3. adopting eaglelint on a tree with gaps


def test_add_noqa_writes_a_suppression_with_a_reason_and_the_next_run_is_clean(fork):
    path = fork / LAYOUT / WRAPPER
    done = run("check", "--add-noqa", "--noqa-reason", "vision tower only", fork / LAYOUT)
    assert done.returncode == 0 and "Added 2 noqa directives in 1 file" in done.stdout
    line = path.read_text().splitlines()[7]
    assert line.startswith("class PlainWrapperForConditionalGeneration")
    assert line.endswith("# noqa: EGL001, EGL002 -- vision tower only")
    assert run("check", "--report-unused-suppressions", fork / LAYOUT).returncode == 0


def test_baseline_hides_recorded_findings_and_a_new_gap_is_still_caught(fork):
    baseline = fork / "eaglelint-baseline.json"
    wrote = run("check", "--baseline", baseline, "--write-baseline", fork / LAYOUT)
    assert wrote.returncode == 0 and baseline.is_file()
    assert run("check", "--baseline", baseline, fork / LAYOUT).returncode == 0
    source = (fork / LAYOUT / WRAPPER).read_text()
    (fork / LAYOUT / WRAPPER).write_text("\n\n" + source)  # lines move: still the same findings
    assert run("check", "--baseline", baseline, fork / LAYOUT).returncode == 0
    (fork / LAYOUT / "second.py").write_text(source.replace("PlainWrapperForConditionalGeneration", "SecondWrapper"))
    (fork / "pyproject.toml").write_text('[tool.eaglelint]\nbaseline = "eaglelint-baseline.json"\n')
    done = json_check(fork / LAYOUT, cwd=fork / "python")
    assert done.returncode == 1
    assert {r["class"] for r in json.loads(done.stdout)} == {"SecondWrapper"}


# 4. fixing dependents


def test_dependent_findings_come_with_commands_that_fix_them(tmp_path):
    shutil.copytree(DEPENDENTS, tmp_path / LAYOUT)
    done = run("check", LAYOUT / "deepseek_v2.py", cwd=tmp_path)
    assert done.returncode == 1
    lines = [line.strip() for line in done.stdout.splitlines()]
    cli = next(line for line in lines if line.startswith("eaglelint fix --write "))
    hook = next(line for line in lines if line.startswith("pre-commit run eaglelint-fix --hook-stage manual --files "))
    assert shlex.split(cli)[3:] == shlex.split(hook)[6:]
    named = set(shlex.split(cli)[3:])
    assert str(LAYOUT / "kimi_vl.py") in named and str(LAYOUT / "dots_vlm.py") in named
    assert "staged" in done.stdout
    fixed = run(*shlex.split(cli)[1:], cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert run("check", LAYOUT / "deepseek_v2.py", cwd=tmp_path).returncode == 0


def test_fix_of_the_changed_file_names_the_command_for_its_dependents(tmp_path):
    shutil.copytree(DEPENDENTS, tmp_path / LAYOUT)
    done = run("fix", "--write", LAYOUT / "deepseek_v2.py", cwd=tmp_path)
    assert done.returncode == 1
    assert f"pre-commit run eaglelint-fix --hook-stage manual --files {LAYOUT / 'deepseek_vl2.py'}" in done.stdout


# 5. no PATH: this checkout first, the installed package only for check


@pytest.fixture
def installed(tmp_path):
    """An importable `sglang` package with a gap, as pip would have installed it."""
    site = tmp_path / "site"
    models = site / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "__init__.py").write_text("")
    for name in ("base_llm.py", "derived_llm.py", WRAPPER):
        shutil.copy(CHECK / name, models / name)
    return site


def test_no_path_checks_and_fixes_this_checkout_never_the_installed_package(fork, installed):
    env = {"PYTHONPATH": f"{installed}:{REPO}"}
    before = (installed / "sglang/srt/models" / WRAPPER).read_bytes()
    done = run("fix", "--write", cwd=fork, env=env)
    assert done.returncode == 0, done.stderr
    assert str(fork / LAYOUT) in done.stderr
    assert "def get_embed_and_head(" in (fork / LAYOUT / WRAPPER).read_text()
    assert (installed / "sglang/srt/models" / WRAPPER).read_bytes() == before
    inside = run("check", cwd=fork / "python/sglang/srt", env=env)  # a folder inside the checkout
    assert inside.returncode == 0 and str(fork / LAYOUT) in inside.stderr


def test_no_path_outside_a_checkout_checks_the_installed_package_but_never_fixes_it(tmp_path, installed):
    env = {"PYTHONPATH": f"{installed}:{REPO}"}
    (tmp_path / "elsewhere").mkdir()
    done = run("check", cwd=tmp_path / "elsewhere", env=env)
    assert done.returncode == 1 and "installed sglang package" in done.stderr
    assert str(installed / "sglang/srt/models") in done.stderr
    before = (installed / "sglang/srt/models" / WRAPPER).read_bytes()
    refused = run("fix", "--write", cwd=tmp_path / "elsewhere", env=env)
    assert refused.returncode == 2 and "pass the folder" in refused.stderr
    assert (installed / "sglang/srt/models" / WRAPPER).read_bytes() == before


def test_no_path_outside_a_git_work_tree_never_takes_a_sibling_folder(tmp_path, fork, installed):
    """In ~/scratch, with ~/python/sglang/srt/models beside it and no git work tree: only the
    working directory is looked at, so fix refuses (exit 2) and check takes the installed
    package, each naming the folder it looked in."""
    env = {"PYTHONPATH": f"{installed}:{REPO}"}
    scratch = fork / "scratch"
    scratch.mkdir()
    before = (fork / LAYOUT / WRAPPER).read_bytes()
    refused = run("fix", "--write", cwd=scratch, env=env)
    assert refused.returncode == 2 and "working directory only" in refused.stderr
    assert (fork / LAYOUT / WRAPPER).read_bytes() == before
    checked = run("check", cwd=scratch, env=env)
    assert f"checking {installed / 'sglang/srt/models'} " in checked.stderr
    assert str(fork / LAYOUT) not in checked.stderr + checked.stdout


def test_no_path_inside_a_git_work_tree_walks_up_to_its_root_and_no_further(tmp_path, fork):
    """From a subfolder of a git work tree, its root's models folder is found, and the line
    on stderr names the folder and the work tree; a models folder above the root is not."""
    (fork / ".git").mkdir()
    deep = fork / "docs" / "notes"
    deep.mkdir(parents=True)
    done = run("fix", "--write", cwd=deep)
    assert done.returncode == 0, done.stderr
    assert f"checking {fork / LAYOUT} " in done.stderr and f"git work tree {fork})" in done.stderr
    assert "def get_embed_and_head(" in (fork / LAYOUT / WRAPPER).read_text()
    nested = fork / "vendor" / "other"  # its own work tree, below a folder that has a models folder
    (nested / ".git").mkdir(parents=True)
    outside = run("fix", "--write", cwd=nested)
    assert outside.returncode == 2 and str(nested) in outside.stderr


def test_add_noqa_names_a_file_it_will_not_write_and_goes_on(fork):
    models = fork / LAYOUT
    (models / "linked.py").symlink_to(models / WRAPPER)
    done = run("check", "--add-noqa", models)
    assert done.returncode == 1 and "linked.py" in done.stderr and "symbolic link" in done.stderr
    assert (models / "linked.py").is_symlink()
    assert "# noqa: EGL001, EGL002" in (models / WRAPPER).read_text()
