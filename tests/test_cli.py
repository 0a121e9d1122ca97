"""The command line as users and CI meet it: exit codes, JSON schema, errors, help."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, REPO

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
JSON_KEYS = {"path", "line", "column", "code", "message", "class", "wrapped_class", "method",
             "wrapped_path", "wrapped_line", "severity", "entry_class", "fixable"}


def run(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})})


def test_findings_exit_1_and_json_schema():
    done = run("check", "--output-format", "json", MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1
    rows = json.loads(done.stdout)
    assert {r["method"] for r in rows} == {"get_embed_and_head", "set_eagle3_layers_to_capture",
                                           "set_embed_and_head"}
    for row in rows:
        assert row.keys() >= JSON_KEYS
        assert row["class"] == "PlainWrapperForConditionalGeneration"
        assert row["line"] == 8 and row["column"] == 1


def test_clean_file_exits_0():
    done = run("check", MODELS / "ok_delegating.py")
    assert done.returncode == 0, done.stdout


def test_missing_path_among_good_ones_is_reported_and_run_goes_on(tmp_path):
    done = run("check", "--output-format", "json", tmp_path / "nope.py", MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1
    codes = [r["code"] for r in json.loads(done.stdout)]
    assert codes.count("EGL999") == 1 and codes.count("EGL001") == 2


def test_nothing_checkable_exits_2_without_traceback(tmp_path):
    done = run("check", tmp_path / "nope")
    assert done.returncode == 2
    assert "no such file" in done.stderr and "Traceback" not in done.stderr


def test_no_path_and_no_sglang_exits_2_saying_what_to_pass(tmp_path):
    done = run("check", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 2
    assert "pass the folder" in done.stderr


def test_no_path_finds_checkout_layout(tmp_path):
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", "wrapper_plain_assign.py"):
        (models / name).write_text((MODELS / name).read_text())
    done = run("check", "--output-format", "json", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 1
    assert {Path(r["path"]).name for r in json.loads(done.stdout)} == {"wrapper_plain_assign.py"}


def test_select_and_ignore_filter_codes():
    path = MODELS / "wrapper_plain_assign.py"
    only = json.loads(run("check", "--output-format", "json", "--select", "EGL002", path).stdout)
    assert [r["code"] for r in only] == ["EGL002"]
    done = run("check", "--ignore", "EGL001,EGL002", path)
    assert done.returncode == 0


def test_unknown_code_or_interface_is_a_usage_error():
    assert run("check", "--select", "XYZ1", MODELS).returncode == 2
    assert run("check", "--interface", "nope", MODELS).returncode == 2


def test_other_attribute_names_found_by_what_they_hold_and_wrapper_attribute_restricts(tmp_path):
    (tmp_path / "base_llm.py").write_text((MODELS / "base_llm.py").read_text())
    (tmp_path / "fork.py").write_text(
        "from base_llm import BaseLLMForCausalLM\n\n\nclass ForkWrapper:\n"
        "    def __init__(self, config):\n        self.llm = BaseLLMForCausalLM(config)\n"
    )
    eagle3 = {"get_embed_and_head", "set_eagle3_layers_to_capture", "set_embed_and_head"}
    for flags in ((), ("--wrapper-attribute", "llm")):
        done = run("check", "--output-format", "json", *flags, tmp_path)
        assert {r["method"] for r in json.loads(done.stdout)} == eagle3
    assert run("check", "--wrapper-attribute", "language_model", tmp_path).returncode == 0


def test_text_output_groups_by_file_and_counts_by_rule():
    done = run("check", MODELS / "wrapper_plain_assign.py", env={"NO_COLOR": "1"})
    lines = done.stdout.splitlines()
    assert lines[0].endswith("wrapper_plain_assign.py")
    assert "EGL001 x2" in done.stdout and "EGL002 x1" in done.stdout
    assert "\x1b[" not in done.stdout


def test_rules_and_rule_docs():
    listing = run("rules").stdout
    for code in ("EGL001", "EGL002", "EGL010", "EGL999"):
        assert code in listing
    doc = run("rule", "EGL001")
    assert doc.returncode == 0 and "Bad" in doc.stdout and "Good" in doc.stdout
    assert run("rule", "EGL123").returncode == 2


def test_help_shows_examples():
    assert "Examples:" in run("check", "--help").stdout


def test_text_output_explains_entry_class_in_a_legend():
    marked = run("check", MODELS / "wrapper_plain_assign.py", env={"NO_COLOR": "1"}).stdout
    assert "(EntryClass)" in marked
    legend = [line for line in marked.splitlines() if line.startswith("(EntryClass):")]
    assert len(legend) == 1 and "EntryClass" in legend[0][len("(EntryClass):"):]
    plain = run("check", MODELS / "unresolved_wrapped.py", "--select", "EGL010", env={"NO_COLOR": "1"}).stdout
    assert ("(EntryClass):" in plain) == (" (EntryClass)" in plain.replace("(EntryClass):", ""))
