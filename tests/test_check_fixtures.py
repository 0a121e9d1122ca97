"""Every fixture under fixtures/check carries its expected findings inline.

A flagged line ends with `# expect: CODE[method] ...`; the test compares expected
against found for every fixture file, so a missed finding and a false one both fail.
A fixture checked with other interface packs than the default names them near its
top: `interfaces: all` or `interfaces: eagle3,dflash`.
"""

import os
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import load_codes, select_interfaces

TREE = FIXTURES / "check"
FILES = sorted(TREE.rglob("*.py"))
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
TOKEN = re.compile(r"(EGL\d{3})(?:\[(\w+)\])?")
PACKS = re.compile(r"interfaces:\s*([\w,]+)")
ATTRS = re.compile(r"wrapper-attributes:\s*([\w,]+)")


def packs_of(path: Path) -> str | None:
    m = PACKS.search("\n".join(path.read_text().splitlines()[:5]))
    return m.group(1) if m else None


def attrs_of(path: Path) -> str | None:
    """`wrapper-attributes: llm` near the top: the fixture is checked with that restriction."""
    m = ATTRS.search("\n".join(path.read_text().splitlines()[:8]))
    return m.group(1) if m else None


@cache
def findings_with(packs: str | None, attrs: str | None = None):
    files = discover([TREE]).files
    options = CheckOptions(tuple(select_interfaces(packs.split(",") if packs else None)))
    if attrs:
        options = CheckOptions(options.interfaces, tuple(attrs.split(",")))
    return check_files(files, options).findings


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
    found = {(f.line, f.code, f.method) for f in findings_with(packs_of(path), attrs_of(path))
             if Path(f.path).resolve() == path.resolve()}
    assert found == expected(path)


def test_every_rule_code_has_a_fixture_named_after_it_that_expects_it():
    """Adding a rule is one check module, one codes.toml entry and one fixture named
    `<CODE>_<pattern>.py` in a tree an inline-expectation runner reads (this file's for
    fixtures/check, test_suppressions' for fixtures/suppressions). No code is exempt:
    EGL999 (an unreadable file) and EGL900 (an unused suppression) have fixtures too."""
    trees = (TREE, FIXTURES / "suppressions")
    for code in load_codes():
        named = [p for tree in trees for p in sorted(tree.rglob(f"{code}_*.py"))]
        assert named, f"no fixture named {code}_*.py under fixtures/check or fixtures/suppressions"
        assert any(code in {c for _, c, _ in expected(p)} for p in named), f"{named[0].name} never expects {code}"


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


def test_subclass_choosing_another_held_class_is_judged_with_its_own_choice(findings):
    by_class: dict[str, set] = {}
    for f in findings:
        if f.path.endswith("held_class_override.py"):
            by_class.setdefault(f.class_name, set()).add((f.method, f.subclasses))
    # keeps the base's choice: named at the base; picks another class: judged on its own
    assert by_class["PartialChoiceWrapper"] == {("get_embed_and_head", ("PartialChoiceChild",))}
    assert {m for m, _ in by_class["FullChoiceChild"]} == {
        "set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}
    # the reverse: a subclass whose model lacks the hooks is not said to inherit the gap
    assert all(subs == () for _, subs in by_class["FullFactoryWrapper"])
    assert "PlainFactoryChild" not in by_class


def test_unparsable_module_reached_by_resolution_is_the_reason_and_is_reported():
    wrapper = TREE / "sglang/srt/models/wrapper_broken_import.py"
    found = check_files([wrapper], CheckOptions(tuple(select_interfaces(None)))).findings
    assert {(Path(f.path).name, f.code) for f in found} == {
        ("wrapper_broken_import.py", "EGL010"), ("broken_lm.py", "EGL999")}
    unresolved = next(f for f in found if f.code == "EGL010")
    assert "broken_lm.py cannot be parsed" in unresolved.sentence


def test_file_whose_only_assignment_is_a_tuple_target_is_checked(tmp_path):
    source = (TREE / "sglang/srt/models/wrapper_tuple_and_closure.py").read_text()
    start = source.index("class TupleTargetWrapper")
    only = source[:source.index("def build_models")] + source[start:source.index("class UnpackedCallWrapper")]
    models = tmp_path / "sglang/srt/models"
    models.mkdir(parents=True)
    (models / "base_llm.py").write_text((TREE / "sglang/srt/models/base_llm.py").read_text())
    (models / "tuple_only.py").write_text(only)
    found = check_files(sorted(models.glob("*.py")), CheckOptions(tuple(select_interfaces(None)))).findings
    assert {(f.class_name, f.method) for f in found} == {
        ("TupleTargetWrapper", m) for m in ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")}


def test_findings_hold_absolute_paths(findings):
    """The output stage makes paths relative to the directory it runs in; a finding (which
    the cache keeps across directories) holds them absolute."""
    assert findings
    assert all(os.path.isabs(f.path) and (f.wrapped_path is None or os.path.isabs(f.wrapped_path))
               for f in findings)
