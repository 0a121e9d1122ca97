"""`Anchored` finds exactly what `re` finds: the same matches (spans, groups) for
`search` from any position, `finditer` and `findall`, for the patterns eaglelint
searches this way (an opening `\\b`, a MULTILINE `^`, an alternation of words), on hand
cases where a search from the literals could part from `re` (a literal inside another, a
word inside a longer one, a line start, overlapping occurrences), on every model file of
a real release, and on texts drawn by hypothesis.
"""

import re

import pytest
from fetch_sglang import release_root
from hypothesis import given, settings
from hypothesis import strategies as st

from eaglelint.analysis.syntax.textscan import Anchored

SETTER = (rb"(?P<setter>add_module|register_module|setattr|__setattr__)[ \t]*\(\s*(?:self\s*,\s*)?"
          rb"(?:[\"'](?P<attr>\w+)[\"']|[\w.]+)\s*,\s*(?P<callee>[\w.]+)\(")
SETTERS = (b"add_module", b"register_module", b"setattr", b"__setattr__")
IMPORT = rb"^from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"

# (pattern, flags, literals), str patterns; the bytes ones are tested on bytes below
STR_PATTERNS = [
    (r"\b(?:Foo|FooBar|Bar_2)\b", 0, ("Foo", "FooBar", "Bar_2")),
    (r"\bdef[\s\\]+forward\b", 0, ("def",)),
    (r"^class[ \t]+(\w+)", re.M, ("class",)),
    (r"(?:aa|a)(b)?", 0, ("aa", "a")),
    (r"\b(?:ab|abab)\b|(x)", 0, ("ab", "abab", "x")),
    (r"aa(b)", 0, ("aa",)),  # a match at an occurrence that overlaps the one before
]


def agree(anchored: Anchored, text) -> None:
    pattern = anchored.pattern
    spans = [(m.span(), m.groups()) for m in pattern.finditer(text)]
    assert [(m.span(), m.groups()) for m in anchored.finditer(text)] == spans
    assert anchored.findall(text) == pattern.findall(text)
    for pos in range(len(text) + 1):
        want, got = pattern.search(text, pos), anchored.search(text, pos)
        assert (got.span(), got.groups()) == (want.span(), want.groups()) if want else got is None


@pytest.mark.parametrize("text", [
    "Foo FooBar xFoo Foo_ Bar_2 aFooBar Foo",
    "FooFooBar Foo\nFooBar",
    "class A:\n  class B:\nclass  C(x)\nxclass D\n",
    "def forward(self)\nundef forward\n  def\\\n forward\ndefforward def  forwarding",
    "aab aaab ab abab ababab xab x",
    "",
])
@pytest.mark.parametrize("case", STR_PATTERNS, ids=[p for p, _, _ in STR_PATTERNS])
def test_hand_cases_match_re(case, text):
    pattern, flags, literals = case
    agree(Anchored(re.compile(pattern, flags), literals), text)


def test_bytes_patterns_match_re_on_every_model_file_of_a_release():
    setter = Anchored(re.compile(SETTER), SETTERS)
    imports = Anchored(re.compile(IMPORT, re.M), (b"from",))
    files = sorted((release_root("0.5.23") / "sglang" / "srt" / "models").rglob("*.py"))
    assert len(files) > 250
    seen = {"setter": 0, "import": 0}
    for path in files:
        raw = path.read_bytes()
        for name, anchored in (("setter", setter), ("import", imports)):
            found = [(m.span(), m.groups()) for m in anchored.finditer(raw)]
            assert found == [(m.span(), m.groups()) for m in anchored.pattern.finditer(raw)], path
            assert anchored.findall(raw) == anchored.pattern.findall(raw), path
            seen[name] += len(found)
    assert seen["setter"] > 0 and seen["import"] > 1000  # both patterns were really exercised


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="Fo Bar_2\nxdefclass\\(", max_size=60), st.integers(0, len(STR_PATTERNS) - 1))
def test_drawn_texts_match_re(text, which):
    pattern, flags, literals = STR_PATTERNS[which]
    agree(Anchored(re.compile(pattern, flags), literals), text)


def test_a_literal_found_inside_another_is_tried_where_it_starts():
    # `setattr` occurs inside `__setattr__`: tried there too, as `re` tries every position
    anchored = Anchored(re.compile(SETTER), SETTERS)
    raw = b"object.__setattr__(self, 'llm', LM(cfg))\nsetattr(self, 'vision', V())\n"
    assert [m["attr"] for m in anchored.finditer(raw)] == [b"llm", b"vision"]
    assert [m["setter"] for m in anchored.finditer(raw)] == [b"__setattr__", b"setattr"]


def test_served_readings_from_their_literals_match_their_patterns_on_a_release():
    """served.py finds a class's methods (`_defs`) and whether a module binds a registered name
    at column 0 (`_bound_at_0`) from where the name or `def` occurs: the same answers as its
    patterns tried on every line."""
    from eaglelint.analysis.sglang.served import _BOUND_AT_0, _DEF, _WORD, _bound_at_0, _defs

    files = sorted((release_root("0.5.23") / "sglang" / "srt" / "models").rglob("*.py"))
    hand = b"\ndef f(x=1): pass\nFoo, Bar = 1, 2\nfrom m import Bar as Baz\n  Qux = 1\nasync def Quux(): pass\n"
    for raw in [hand] + [path.read_bytes() for path in files]:
        text = b"\n" + raw
        bound = set()
        for assigned, function, imports in _BOUND_AT_0.findall(text):
            bound |= {assigned, function} | set(_WORD.findall(imports))
        for name in set(_WORD.findall(raw[:4000])) | {b"Foo", b"Bar", b"Baz", b"Qux", b"Quux", b"def"}:
            assert _bound_at_0(text, name) == (name in bound), name
        decoded = "\n" + raw.decode("utf-8")
        assert _defs(decoded) == _DEF.findall(decoded)
    assert _defs("\n  def a def b\n  xdef c\n\tasync  def d(\n") == ["a", "d"]


def test_class_lines_count_what_the_multiline_pattern_counts_on_a_release():
    """The fix places a member from the summary only where one line opens `class <name>`:
    counted from where `class <name>` occurs, as `^[ \\t\\f]*class[ \\t]+<name>\\b` counts."""
    from eaglelint.fix.members import _class_lines

    files = sorted((release_root("0.5.23") / "sglang" / "srt" / "models").rglob("*.py"))
    hand = "class A: pass\n  class A(B):\n\fclass A\nx class A\nclass AB\n#class A\n\rclass A\n"
    for text in [hand] + [path.read_text("utf-8") for path in files]:
        for name in set(re.findall(r"class\s+(\w+)", text)) | {"A", "AB"}:
            name = re.escape(name)
            assert _class_lines(text, name) == len(re.findall(rf"^[ \t\f]*class[ \t]+{name}\b", text, re.M))
    assert _class_lines(hand, "A") == 3


def test_files_naming_finds_the_files_that_hold_each_name_on_a_release():
    """The subclass search finds the files that hold a wrapper's name by the parts names share
    (`ForConditionalGeneration`, `ForCausalLM`, `MiniCPM`): the same files, in the same order,
    as `name in raw` on each, for wrappers' names and for names that are parts of others."""
    from pathlib import Path

    from eaglelint.checks.delegation import files_naming

    files = sorted((release_root("0.5.23") / "sglang" / "srt" / "models").rglob("*.py"))
    raws = {path: path.read_bytes() for path in files}
    raws[Path("/hand/a.py")] = b"aaaa ModelModel VLForConditionalGenerationForConditionalGeneration MiniCPMV4_6X"
    raws[Path("/hand/b.py")] = b"xxxxxxxA"  # the name starts at the second of two overlapping `xxxxxx`
    raws[Path("/hand/empty.py")] = b""
    every = b"\n".join(raws.values())
    wrappers = set(re.findall(rb"\bclass\s+(\w+(?:ForConditionalGeneration|ForCausalLM|MiniCPM\w*))", every))
    assert len(wrappers) > 100
    extra = {b"aa", b"aaa", b"Model", b"odel", b"VLForConditionalGeneration", b"ForConditionalGeneration",
             b"MiniCPMV4_6X", b"MiniCPMO", b"MiniCPMV2_6", b"NemotronH_Nano_VL_V2", b"xxxxxxA", b"xxxxxxB"}
    for names in (wrappers, wrappers | extra, extra, {b"MiniCPMO"}):
        found = files_naming(raws, names)
        for name in names:
            assert found[name] == [path for path, raw in raws.items() if name in raw], name
