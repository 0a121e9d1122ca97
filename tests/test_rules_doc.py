"""docs/rules.md is generated from rules/codes.toml (scripts/gen_rules_doc.py), as ruff
generates its rule pages, and `eaglelint rule CODE` prints the same page in the same order.

Why a test: a code added to codes.toml without regenerating the page, or a page edited by
hand, leaves users reading a reference that is not the tool's.
"""

import os
import re
import subprocess
import sys

from conftest import FIXTURES, REPO

from eaglelint.packs import load_codes
from eaglelint.pipeline.lint import SettingsFinder, lint

PAGE = REPO / "docs" / "rules.md"


def page_of(code: str) -> str:
    return PAGE.read_text().split(f"\n## {code} ", 1)[1].split("\n## ", 1)[0]


def test_rules_page_is_what_the_generator_writes():
    done = subprocess.run([sys.executable, REPO / "scripts" / "gen_rules_doc.py", "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_every_code_has_a_page_with_its_severity_examples_and_fixability():
    """Read against the TOML, not the generator: each entry's facts are on its page."""
    for code, rule in load_codes().items():
        page = page_of(code)
        assert page.startswith(f"{rule.name}\n"), code
        assert f"Severity: {rule.severity}." in page and ("Automatic fix: yes" in page) == rule.fixable, code
        for example in (rule.bad, rule.good):
            assert f"```python\n{example.strip()}\n```" in page, code
        index_row = next(line for line in PAGE.read_text().splitlines() if line.startswith(f"| [{code}]"))
        assert f"| {rule.severity} | {'yes' if rule.fixable else 'no'} |" in index_row


def test_rule_command_prints_the_pages_sections_in_its_order():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for code in load_codes():
        titles = re.findall(r"^### (.+)$", page_of(code), flags=re.M)
        out = subprocess.run([sys.executable, "-m", "eaglelint", "rule", code], capture_output=True, text=True,
                             env=env).stdout.splitlines()
        assert [line for line in out if line in titles] == titles, code


def test_a_finding_without_an_automatic_fix_says_why_on_its_last_help_line():
    models = FIXTURES / "check" / "sglang" / "srt" / "models"
    result = lint([models / "EGL041_owner_no_sibling.py"], SettingsFinder(isolated=True))
    found = [f for f in result.findings if f.code == "EGL041"]
    assert found and all(f.fix_refusal and f.notes[-1] == f"no automatic fix: {f.fix_refusal}" for f in found)
