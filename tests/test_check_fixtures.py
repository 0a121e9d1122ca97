"""Every fixture under fixtures/check carries its expected findings inline.

A flagged line ends with `# expect: CODE[method] ...`; the test compares expected
against found for every fixture file, so a missed finding and a false one both fail.
A fixture checked with other interface packs than the default names them near its
top: `interfaces: all` or `interfaces: eagle3,dflash`.
"""

import re
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.checker import CheckOptions, check_files
from eaglelint.discover import discover
from eaglelint.interfaces import select_interfaces

TREE = FIXTURES / "check"
FILES = sorted(TREE.rglob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
TOKEN = re.compile(r"(EGL\d{3})(?:\[(\w+)\])?")
PACKS = re.compile(r"interfaces:\s*([\w,]+)")


def packs_of(path: Path) -> str | None:
    m = PACKS.search("\n".join(path.read_text().splitlines()[:5]))
    return m.group(1) if m else None


@cache
def findings_with(packs: str | None):
    files = discover([TREE]).files
    return check_files(files, CheckOptions(tuple(select_interfaces(packs.split(",") if packs else None)))).findings


def expected(path: Path) -> set[tuple[int, str, str | None]]:
    out = set()
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, code, method or None) for code, method in TOKEN.findall(m.group(1))}
    return out


@pytest.fixture(scope="module")
def findings():
    return findings_with(None)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fixture_findings_match_inline_expectations(path):
    found = {(f.line, f.code, f.method) for f in findings_with(packs_of(path))
             if Path(f.path).resolve() == path.resolve()}
    assert found == expected(path)


def test_fixture_tree_has_positive_and_negative_cases():
    with_expect = [p for p in FILES if expected(p)]
    assert len(with_expect) >= 12 and len(FILES) - len(with_expect) >= 5


def test_subclass_gap_reported_once_at_base_naming_subclasses(findings):
    by_method = {f.method: f for f in findings if f.class_name == "BaseWrapper"}
    assert by_method["get_embed_and_head"].subclasses == ("ChildWrapper",)
    assert set(by_method["set_eagle3_layers_to_capture"].subclasses) == {"ChildWrapper", "ChildThatDelegates"}
    assert by_method["get_embed_and_head"].entry_class  # ChildWrapper is in EntryClass
    assert not any(f.class_name.startswith("Child") for f in findings)


def test_wrapped_method_location_points_at_defining_base(findings):
    f = next(f for f in findings if f.class_name == "PlainWrapperForConditionalGeneration"
             and f.method == "set_eagle3_layers_to_capture")
    assert f.wrapped_class == "DerivedLLMForCausalLM"
    assert f.provider_class == "BaseLLMForCausalLM"
    assert Path(f.wrapped_path).name == "base_llm.py"
    line = (TREE / "sglang/srt/models/base_llm.py").read_text().splitlines()[f.wrapped_line - 1]
    assert "def set_eagle3_layers_to_capture" in line
    assert f.entry_class


def test_draft_only_method_has_lower_severity(findings):
    severities = {f.method: f.severity for f in findings if f.class_name == "AnnotatedWrapper"}
    assert severities == {
        "get_embed_and_head": "error",
        "set_eagle3_layers_to_capture": "error",
        "set_embed_and_head": "warning",
    }


def test_unresolved_wrapper_names_subclasses_inheriting_it(findings):
    f = next(f for f in findings if f.class_name == "RegistryWrapper")
    assert f.code == "EGL010"
    assert f.subclasses == ("RegisteredChild",) and f.entry_class
