"""A finding's text: one short line, help lines under it, and nothing lost on the way to JSON.

Why: a message that carries the what, the why, every candidate and the fix runs to hundreds
of characters on one line (ruff prints a short `message()` and a separate `help:` line for
the fix title). The short line names the class and the member; the rest is on help lines in
the text report and in fields of their own in JSON, SARIF keeps the whole text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from eaglelint.checks.aux_path import CODES as AUX_CODES
from eaglelint.checks.capture_chain import CODES as CHAIN_CODES
from eaglelint.checks.registry import FAMILIES
from eaglelint.output.sarif import sarif_log

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
NO_FIX = MODELS / "EGL041_owner_no_sibling.py"  # an owner whose members eaglelint cannot write
SUBCLASSED = MODELS / "wrapper_subclass.py"  # a wrapper whose gaps two subclasses inherit
# the aux path's and the capture chain's findings name the forward, the writer and the reader;
# their wrapped and provider classes are fields of their own, never said in the text
FORWARD_CODES = {*AUX_CODES, *CHAIN_CODES}
SHORT = 170  # the longest message on 0.5.9, 0.5.21 and 0.5.23 is 167 characters


def run(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_text_report_prints_the_short_message_then_indented_help_lines():
    """EGL041_owner_no_sibling.py: LonelyForCausalLM (line 29) lacks both owner members; its
    decoder's forward (line 18) reads self.layers_to_capture, and no sibling or decoder
    contract lets eaglelint write them."""
    rows = json.loads(run("check", "--no-cache", "--no-dependents", "--output-format", "json", NO_FIX).stdout)
    lines = run("check", "--no-cache", "--no-dependents", NO_FIX).stdout.splitlines()
    assert [r["code"] for r in rows] == ["EGL041", "EGL041"]
    for row in rows:
        at = lines.index(f"  29:1 EGL041 {row['message']} (EntryClass)")
        helps = lines[at + 1:at + 1 + len(row["help"]) + 1]
        assert helps == [*(f"    help: {h}" for h in row["help"]), f"    help: no automatic fix: {row['fix_refusal']}"]
        assert "LonelyForCausalLM" in row["message"] and row["method"] in row["message"]
        assert len(row["message"]) <= SHORT and row["fix_refusal"] not in row["message"]
        assert any("EGL041_owner_no_sibling.py:18" in h and "self.layers_to_capture" in h for h in row["help"])


def test_a_fixable_finding_says_what_the_fix_writes_and_names_the_subclasses_once():
    """wrapper_subclass.py: BaseWrapper's language_model is BaseLLMForCausalLM (base_llm.py:24
    defines set_eagle3_layers_to_capture); ChildWrapper and ChildThatDelegates inherit the gap."""
    rows = json.loads(run("check", "--no-cache", "--no-dependents", "--output-format", "json", SUBCLASSED).stdout)
    row = next(r for r in rows if r["class"] == "BaseWrapper" and r["method"] == "set_eagle3_layers_to_capture")
    assert "BaseLLMForCausalLM, base_llm.py:24" in row["message"]
    assert row["help"] == ["inherited by ChildWrapper, ChildThatDelegates"]
    assert row["fix_title"] == "delegate set_eagle3_layers_to_capture to self.language_model"
    lines = run("check", "--no-cache", "--no-dependents", SUBCLASSED).stdout.splitlines()
    at = lines.index(f"  11:1 EGL001 {row['message']} (EntryClass)")
    assert lines[at + 1:at + 3] == ["    help: inherited by ChildWrapper, ChildThatDelegates",
                                    f"    help: eaglelint fix: {row['fix_title']}"]


def test_one_line_formats_print_the_message_alone():
    given = ("--no-cache", "--no-dependents", NO_FIX, SUBCLASSED)
    rows = json.loads(run("check", "--output-format", "json", *given).stdout)
    for args in (("--output-format", "concise"), ("--quiet",)):
        lines = run("check", *args, *given).stdout.splitlines()
        assert not any("help:" in line for line in lines)
        assert len([line for line in lines if " EGL0" in line]) == len(rows)
        assert all(any(f"{r['code']} {r['message']}" in line for line in lines) for r in rows)


def test_sarif_message_holds_the_message_and_every_help_line():
    from eaglelint.checks.run import CheckOptions, check_files
    from eaglelint.packs import select_interfaces

    found = check_files([NO_FIX, SUBCLASSED], CheckOptions(tuple(select_interfaces(None)))).findings
    texts = [r["message"]["text"] for r in sarif_log(found, REPO)["runs"][0]["results"]]
    assert sorted(texts) == sorted("\n".join((f.message, *(f"help: {n}" for n in f.notes))) for f in found)
    assert all(len(f.notes) >= 1 for f in found)  # each says at least what the fix does, or why there is none


def test_rule_names_the_module_that_declares_the_code():
    done = run("rule", "EGL041")
    assert "Implemented in `eaglelint.checks.owner`." in done.stdout
    owner = next(f for f in FAMILIES if "EGL041" in f.CODES)
    assert owner.__name__ == "eaglelint.checks.owner"
    assert "Implemented in `eaglelint.pipeline.suppressions`." in run("rule", "EGL900").stdout


FAMILY = '''
from pathlib import Path

from eaglelint.analysis.python.resolve import ClassEntity
from eaglelint.checks.context import Context
from eaglelint.findings import Finding

CODES = ("EGL001",)
SUBJECTS = "wrappers"
SUBJECT_TEXT = None
FIX = None


def files(context: Context) -> list[Path]:
    return []


def subjects(context: Context) -> list[ClassEntity]:
    return []
'''
CHECK = '''

def check(context: Context, cls: ClassEntity) -> list[Finding]:
    return []
'''


def test_mypy_refuses_a_rule_family_without_check(tmp_path):
    """The registry's RuleFamily protocol is what mypy holds each family module to: a module
    with every name but `check` is refused, the same module with it is accepted."""
    (tmp_path / "family_with_check.py").write_text(FAMILY + CHECK)
    (tmp_path / "family_without_check.py").write_text(FAMILY)
    (tmp_path / "registered.py").write_text(textwrap.dedent('''
        import family_with_check
        import family_without_check

        from eaglelint.checks.registry import RuleFamily

        good: RuleFamily = family_with_check
        bad: RuleFamily = family_without_check
    '''))
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / ".mypy"),
                           "--python-version", "3.11", "--follow-imports", "silent", "registered.py"],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "MYPYPATH": str(REPO)})
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and errors[0].startswith("registered.py:8:"), done.stdout
    assert "missing following \"RuleFamily\" protocol member" in done.stdout and "    check" in done.stdout


@pytest.mark.release
def test_0_5_23_json_keeps_every_class_place_and_reason_of_each_finding():
    """Each finding on SGLang 0.5.23: its short message names the class and the member, and
    what the long message held is in message, help, fix_title or fix_refusal: the subclasses
    (one `inherited by` line), the provider and its place, the writer of a broken capture chain.
    Read off the release by hand: ArceeModel.forward is arcee.py:319 and
    Cosmos3EdgeForConditionalGeneration (cosmos3_edge.py:138) subclasses ArceeForCausalLM;
    DeepseekV4Model captures at deepseek_v4.py:4573 (`slot` in _forward_impl), :4134 and :4210
    (in _forward_layers_hc_pre_from_prev), in different places against the layer call."""
    from fetch_sglang import models_dir

    rows = json.loads(run("check", "--no-cache", "--output-format", "json", models_dir("0.5.23")).stdout)
    for r in rows:
        text = " ".join([r["message"], *r["help"], r["fix_title"] or "", r["fix_refusal"] or ""])
        assert r["class"] in r["message"] and (r["method"] or "") in r["message"], r
        assert len(r["message"]) <= SHORT, r["message"]
        inherited = [h for h in r["help"] if h.startswith("inherited by ")]
        assert inherited == ([f"inherited by {', '.join(r['subclasses'])}"] if r["subclasses"] else []), r
        if r["wrapped_class"] and r["code"] not in FORWARD_CODES:
            assert r["wrapped_class"] in text, r
        if r["wrapped_path"] and r["wrapped_line"]:
            assert f"{Path(r['wrapped_path']).name}:{r['wrapped_line']}" in text, r
        if r["provider_class"] and r["code"] not in FORWARD_CODES:
            assert r["provider_class"] in text, r
        assert r["fixable"] == (r["fix_title"] is not None and r["fix_refusal"] is None), r
        assert r["code"] != "EGL041" or r["fix_refusal"], r
    arcee = next(r for r in rows if r["class"] == "ArceeForCausalLM" and r["method"] == "get_embed_and_head")
    assert "arcee.py:319" in arcee["help"][0]
    assert "inherited by Cosmos3EdgeForConditionalGeneration (cosmos3_edge.py)" in arcee["help"]
    deepseek = next(r for r in rows if r["class"] == "DeepseekV4ForCausalLM" and r["code"] == "EGL041")
    assert all(f"deepseek_v4.py:{line}" in deepseek["fix_refusal"] for line in (4573, 4134, 4210))
