"""`pylint --load-plugins eaglelint.pylint_plugin` reports what `eaglelint check` reports,
run with the real pylint on the fixture trees."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from eaglelint.pylint_plugin import message_ids, symbol

CHECK = FIXTURES / "check" / "sglang" / "srt" / "models"
SUPPRESSIONS = FIXTURES / "suppressions" / "sglang" / "srt" / "models"


def pylint(*args, cwd=REPO):
    done = subprocess.run(
        [sys.executable, "-m", "pylint", "--load-plugins", "eaglelint.pylint_plugin", "--disable=all",
         "--enable=eaglelint", "--recursive=y", "--output-format=json", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(done.stdout or "[]")


def as_found(messages):
    out = set()
    for m in messages:
        code = m["message"].split(" ", 1)[0]
        assert m["symbol"] == symbol(code) and m["message-id"] == message_ids()[code]
        out.add((Path(m["path"]).resolve(), m["line"], m["column"] + 1, code, m["message"].split(" ", 1)[1]))
    return out


def check_json(path, cwd=REPO):
    """What `eaglelint check --output-format json` reports: the command line, not lint()."""
    done = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--no-dependents", "--output-format", "json",
                           str(path)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def eaglelint_found(path):
    return {(Path(r["path"]).resolve(), r["line"], r["column"], r["code"], r["message"]) for r in check_json(path)}


CHILD = ("from sglang.srt.models.wrapper_plain_assign import PlainWrapperForConditionalGeneration\n\n\n"
         "class ChildInAnotherFile(PlainWrapperForConditionalGeneration):\n    pass\n")


@pytest.fixture(scope="module")
def check_tree(tmp_path_factory):
    """The fixture tree, plus a subclass (in a file of its own) of a wrapper with gaps."""
    tree = tmp_path_factory.mktemp("tree") / "sglang" / "srt" / "models"
    shutil.copytree(CHECK, tree)
    (tree / "child_in_another_file.py").write_text(CHILD)
    return tree


@pytest.fixture(scope="module")
def check_tree_messages(check_tree):
    return pylint(check_tree)


def test_same_findings_as_eaglelint_check_on_the_fixture_tree(check_tree, check_tree_messages):
    rows = check_json(check_tree)
    # the gap inherited across files is reported at the base, naming the child and its file
    assert any(Path(r["path"]).name == "wrapper_plain_assign.py"
               and "ChildInAnotherFile (child_in_another_file.py)" in r["subclasses"] for r in rows)
    ours = [m for m in check_tree_messages if m["symbol"].startswith("egl")]
    expected = {f for f in eaglelint_found(check_tree) if f[3] != "EGL999"}
    assert as_found(ours) == expected and len(expected) >= 40


def test_a_file_that_cannot_be_parsed_is_pylints_own_syntax_error(check_tree_messages):
    broken = [m for m in check_tree_messages if Path(m["path"]).name == "EGL999_broken_syntax.py"]
    assert [m["symbol"] for m in broken] == ["syntax-error"]
    assert {f[3] for f in eaglelint_found(CHECK / "EGL999_broken_syntax.py")} == {"EGL999"}


def test_suppressions_and_config_are_honoured_as_by_the_cli(tmp_path):
    messages = [m for m in pylint(SUPPRESSIONS) if m["symbol"].startswith("egl")]
    assert as_found(messages) == eaglelint_found(SUPPRESSIONS)
    assert not any(Path(m["path"]).name == "noqa_bare.py" for m in messages)


def test_pylint_disable_comment_works_on_eaglelint_messages(tmp_path):
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", "wrapper_plain_assign.py"):
        (models / name).write_text((CHECK / name).read_text())
    wrapper = models / "wrapper_plain_assign.py"
    assert {m["symbol"] for m in pylint(wrapper)} == {"egl001-missing-delegation", "egl002-missing-draft-delegation"}
    lines = wrapper.read_text().splitlines()
    lines[7] += "  # pylint: disable=egl002-missing-draft-delegation"
    wrapper.write_text("\n".join(lines) + "\n")
    assert {m["symbol"] for m in pylint(wrapper)} == {"egl001-missing-delegation"}


def test_message_ids_are_unique_and_carry_the_severity():
    ids = message_ids()
    assert len(set(ids.values())) == len(ids)
    assert ids["EGL001"] == "E8801" and ids["EGL002"].startswith("W") and ids["EGL010"].startswith("I")
    assert all(symbol(code).startswith(code.lower() + "-") for code in ids)


def test_a_bad_config_is_a_message_not_a_crash(tmp_path):
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (models / "wrapper_plain_assign.py").write_text((CHECK / "wrapper_plain_assign.py").read_text())
    (tmp_path / "pyproject.toml").write_text('[tool.eaglelint]\nselct = ["EGL001"]\n')
    messages = pylint(models / "wrapper_plain_assign.py")
    assert [m["symbol"] for m in messages] == ["egl999-unreadable-file"]
    assert "selct" in messages[0]["message"]


def test_a_subclass_in_another_file_is_seen_as_check_sees_it(tmp_path):
    """The gap is reported at the base, naming the subclass in another file that inherits
    it and is the module's EntryClass, whether pylint is given the folder or one file."""
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py"):
        (models / name).write_text((CHECK / name).read_text())
    wrapper = (CHECK / "wrapper_plain_assign.py").read_text()
    (models / "wrapper_plain_assign.py").write_text(wrapper.split("EntryClass")[0])
    (models / "child_vlm.py").write_text(
        "from sglang.srt.models.wrapper_plain_assign import PlainWrapperForConditionalGeneration\n\n\n"
        "class ChildVLM(PlainWrapperForConditionalGeneration):\n    pass\n\n\nEntryClass = ChildVLM\n")
    cli = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--output-format", "json", models],
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    rows = json.loads(cli.stdout)
    assert rows and all(r["entry_class"] and "inherited by ChildVLM (child_vlm.py)" in r["help"] for r in rows)
    expected = {(Path(r["path"]).name, r["line"], r["code"], r["message"]) for r in rows}
    for given in (models, models / "wrapper_plain_assign.py"):
        messages = [m for m in pylint(given, cwd=tmp_path) if m["symbol"].startswith("egl")]
        assert {(Path(m["path"]).name, m["line"], m["message"].split(" ", 1)[0], m["message"].split(" ", 1)[1])
                for m in messages} == expected


def test_readme_pylint_command_reports_only_eaglelint_messages(tmp_path):
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", "wrapper_plain_assign.py"):
        (models / name).write_text((CHECK / name).read_text())
    readme = (REPO / "README.md").read_text().split("## pylint plugin", 1)[1]
    command = next(line.strip() for line in readme.splitlines() if line.strip().startswith("pylint "))
    assert "--disable=all" in command and "--enable=eaglelint" in command
    args = command.split()[1:]
    done = subprocess.run([sys.executable, "-m", "pylint", *args], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    messages = [line for line in done.stdout.splitlines() if line.startswith("python/")]
    assert len(messages) == 3 and all("egl00" in line for line in messages), done.stdout
