"""Hostile and broken input: every file is reported or checked, the run goes on, nothing crashes.

Each case is a `w.py` beside a wrapped language model `lm.py`, generated here (no
binary junk in fixtures/). Hostile files contain an assignment `self.language_model =`:
a file without one cannot hold a wrapper and is read but never parsed, so a broken file
without it is (by design) not reported. Cases whose classes resolve are also fixed, and the fix
must keep what the file was (encoding, BOM, line endings, indentation).
"""

import ast
import io
import json
import os
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from conftest import REPO

from eaglelint import cli
from eaglelint.analysis.python import summary
from eaglelint.analysis.python.exprs import _Refs
from eaglelint.analysis.python.project import Project
from eaglelint.checks import aux_path, delegation
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.fix.delegation import DEFAULT_STYLE
from eaglelint.packs import select_interfaces
from eaglelint.pipeline import lint

LM = b'''class TextModelForCausalLM:
    def set_eagle3_layers_to_capture(self, layer_ids=None):
        self.layers_to_capture = layer_ids

    def get_embed_and_head(self):
        return self.embed_tokens, self.lm_head
'''
FIXED = {"set_eagle3_layers_to_capture", "get_embed_and_head"}


def wrapper(value: str = "TextModelForCausalLM(config)", name: str = "Wrapper", indent: str = "    ",
            newline: str = "\n", prelude: str = "") -> str:
    lines = [f"{prelude}from lm import TextModelForCausalLM", "", "", f"class {name}:",
             f"{indent}def __init__(self, config):", f"{indent * 2}self.language_model = {value}"]
    return "".join(line + newline for line in lines)


def _doubling_locals(n: int) -> str:
    """Each local uses the previous one twice: naive expansion costs 2**n."""
    body = ["        a0 = TextModelForCausalLM"]
    body += [f"        a{i} = a{i - 1} if config else a{i - 1}" for i in range(1, n + 1)]
    assign = "        self.language_model"
    return wrapper(f"a{n}(config)").replace(assign, "\n".join(body) + "\n" + assign)


def _inheritance_chain(n: int) -> str:
    classes = "class C0:\n    pass\n" + "".join(f"class C{i}(C{i - 1}):\n    pass\n" for i in range(1, n))
    deep = wrapper(name=f"DeepWrapper(C{n - 1})").split("\n", 1)[1]
    return wrapper(name="ShallowWrapper") + classes + deep


LATIN1 = wrapper(name="Modèle", prelude="# -*- coding: latin-1 -*-\n# café, naïve\n").encode("latin-1")
UTF8 = wrapper().encode()

# name: (content of w.py, codes `check` reports for it, does `fix --write` rewrite it)
CASES = {
    "syntax_error": (b"def broken(self:\n    self.language_model = lm\n", {"EGL999"}, False),
    "syntax_error_without_wrapper_assignment": (b"def broken(:\n    language_model = 1\n", set(), False),
    "empty_file": (b"", set(), False),
    "nul_bytes": (b"\x00" * 64 + b"self.language_model = lm", {"EGL999"}, False),
    "binary_data": (bytes(range(256)) * 8 + b"self.language_model = lm", {"EGL999"}, False),
    "nul_in_valid_source": (UTF8 + b"# \x00\n", {"EGL999"}, False),
    "latin1_with_coding_line": (LATIN1, {"EGL001"}, True),
    "latin1_without_coding_line": (UTF8.replace(b"class", b"# caf\xe9\nclass"), {"EGL999"}, False),
    "unknown_coding": (b"# -*- coding: klingon -*-\n" + UTF8, {"EGL999"}, False),
    "utf8_bom": (b"\xef\xbb\xbf" + UTF8, {"EGL001"}, True),
    "bom_with_latin1_coding": (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + UTF8, {"EGL999"}, False),
    "utf16_not_python_source": (wrapper().encode("utf-16"), set(), False),  # no b"self.language_model =" in it
    "crlf": (wrapper(newline="\r\n").encode(), {"EGL001"}, True),
    "cr_only": (wrapper(newline="\r").encode(), {"EGL001"}, True),
    "mixed_line_endings": (UTF8.replace(b"config):\n", b"config):\r\n", 1), {"EGL001"}, True),
    "no_final_newline": (UTF8.rstrip(b"\n"), {"EGL001"}, True),
    "tabs": (wrapper(indent="\t").encode(), {"EGL001"}, True),
    "tabs_and_spaces_inconsistent": (UTF8 + b"    def f(self):\n\tpass\n        return 1\n", {"EGL999"}, False),
    "form_feed_in_indentation": (UTF8.replace(b"    def __init__", b"\x0c    def __init__"), {"EGL001"}, True),
    "parentheses_5000_deep": (wrapper("(" * 5000 + "1" + ")" * 5000).encode(), {"EGL999"}, False),
    "attribute_chain_5000_deep": (wrapper("TextModelForCausalLM" + ".a" * 5000).encode(), {"EGL999"}, False),
    "attribute_chain_900_deep": (wrapper("TextModelForCausalLM" + ".a" * 900).encode(), {"EGL010"}, False),
    "call_chain_900_deep": (wrapper("TextModelForCausalLM" + "()" * 900).encode(), {"EGL010"}, False),
    "conditional_chain_900_deep": (wrapper("x if c else " * 900 + "TextModelForCausalLM(config)").encode(),
                                   {"EGL010"}, False),
    "locals_doubling_25_times": (_doubling_locals(25).encode(), {"EGL001"}, True),
    "inheritance_chain_1500_deep": (_inheritance_chain(1500).encode(), {"EGL001"}, True),
}


def make_case(root: Path, name: str, content: bytes | None = None) -> Path:
    case = root / name
    case.mkdir(parents=True)
    (case / "lm.py").write_bytes(LM)
    (case / "w.py").write_bytes(CASES[name][0] if content is None else content)
    return case


def check(case: Path, project: Project | None = None, style: str = DEFAULT_STYLE):
    options = CheckOptions(tuple(select_interfaces(None)), style=style)
    return check_files(sorted(case.glob("*.py")), options, project or Project())


def fix_in_process(case: Path, style: str = DEFAULT_STYLE) -> fixmod.FixPlan:
    project = Project()
    plan = fixmod.plan_fixes(check(case, project, style).findings, project, roots=[case])
    for file_fix in plan.files:
        fixmod.write_fix(file_fix)
    return plan


def decode(raw: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    return raw.decode(encoding).removeprefix("\ufeff")


def lines_kept_in_order(old: bytes, new: bytes) -> bool:
    """Every line of `old` is in `new`, in order (the last may have gained a line ending)."""
    new_lines = iter(new.splitlines(keepends=True))
    old_lines = old.splitlines(keepends=True)
    for i, line in enumerate(old_lines):
        last = i == len(old_lines) - 1
        if not any(c == line or (last and c.rstrip(b"\r\n") == line) for c in new_lines):
            return False
    return True


def eaglelint(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})


@pytest.mark.parametrize("name", CASES)
def test_check_reports_each_hostile_file_and_keeps_going(name, tmp_path):
    case = make_case(tmp_path, name)
    result = check(case)
    assert result.files_checked == 2
    in_w = [f for f in result.findings if Path(f.path).name == "w.py"]
    assert {f.code for f in in_w} == CASES[name][1]
    assert not [f for f in result.findings if Path(f.path).name == "lm.py"]
    for f in in_w:
        if f.code == "EGL999":
            assert f.message.partition(": ")[2], "an EGL999 says why"
            if not f.class_name:
                assert (f.line, f.column) == (1, 1)


@pytest.mark.parametrize("name", CASES)
def test_fix_rewrites_only_what_it_can_and_never_breaks_a_file(name, tmp_path):
    case = make_case(tmp_path, name)
    before = (case / "w.py").read_bytes()
    plan = fix_in_process(case)
    after = (case / "w.py").read_bytes()
    assert sorted(p.name for p in case.iterdir()) == ["lm.py", "w.py"]  # no temporary file left
    if not CASES[name][2]:
        assert after == before and plan.files == []
        return
    assert {w.name for w in plan.files[0].writes if w.kind == "method"} == FIXED
    ast.parse(decode(after))
    assert lines_kept_in_order(before, after)
    assert not [f for f in check(case).findings if f.code in ("EGL001", "EGL002")]
    assert fix_in_process(case).files == []  # a second fix is a no-op


def test_latin1_file_is_read_as_latin1_and_written_back_as_latin1(tmp_path):
    case = make_case(tmp_path, "latin1_with_coding_line")
    assert {f.class_name for f in check(case).findings} == {"Modèle"}
    fix_in_process(case, style="guard")  # the one style whose single-candidate fix writes the class name
    after = (case / "w.py").read_bytes()
    assert after.startswith(LATIN1.split(b"\n\n")[0])  # coding line and b"caf\xe9" kept as bytes
    text = after.decode("latin-1")
    assert "class Modèle:" in text and '"Modèle.language_model holds {type(' in text


def test_bom_kept_once(tmp_path):
    case = make_case(tmp_path, "utf8_bom")
    fix_in_process(case)
    after = (case / "w.py").read_bytes()
    assert after.startswith(b"\xef\xbb\xbffrom lm") and after.count(b"\xef\xbb\xbf") == 1


@pytest.mark.parametrize(("name", "newline"), [("crlf", b"\r\n"), ("cr_only", b"\r")])
def test_line_endings_of_the_file_are_used_for_new_lines(name, newline, tmp_path):
    case = make_case(tmp_path, name)
    fix_in_process(case)
    after = (case / "w.py").read_bytes()
    assert b"def get_embed_and_head" in after
    assert after.count(newline) == len(after.splitlines())
    if newline == b"\r":
        assert b"\n" not in after


def test_tab_indented_file_gets_tab_indented_methods(tmp_path):
    case = make_case(tmp_path, "tabs")
    fix_in_process(case)
    assert b"\n\tdef get_embed_and_head(self):\n\t\treturn self.language_model" in (case / "w.py").read_bytes()


def test_inheritance_chain_of_1500_classes_is_followed_to_its_end(tmp_path):
    case = make_case(tmp_path, "inheritance_chain_1500_deep")
    raw = CASES["inheritance_chain_1500_deep"][0]
    findings = check(case).findings
    for name in ("ShallowWrapper", "DeepWrapper(C1499)"):
        line = raw.splitlines().index(f"class {name}:".encode()) + 1
        assert {(f.code, f.line, f.method) for f in findings if f.line == line} == {
            ("EGL001", line, m) for m in FIXED}


def test_expansion_work_is_bounded(tmp_path, monkeypatch):
    """25 locals that each use the previous twice: 2**25 expansions if unbounded. Fails, not hangs."""
    calls = 0
    original = _Refs.of

    def counting(self, *args):
        nonlocal calls
        calls += 1
        if calls > 100_000:
            raise AssertionError("expression expansion is not bounded")
        return original(self, *args)

    monkeypatch.setattr(_Refs, "of", counting)
    findings = check(make_case(tmp_path, "locals_doubling_25_times")).findings
    assert {f.method for f in findings if f.code == "EGL001"} == FIXED


def test_internal_error_in_one_file_is_reported_and_the_others_are_checked(tmp_path, monkeypatch):
    for name in ("crlf", "tabs"):
        make_case(tmp_path, name)
    # project.summarize_raw imports these when a file is first summarised (lazily, or whole)
    real, real_lazily = summary.summarize, summary.summarize_lazily

    def failing(tree, source, path):
        if Path(path).parent.name == "crlf" and Path(path).name == "w.py":
            raise KeyError("boom")
        return real(tree, source, path)

    def failing_lazily(source, path):
        if Path(path).parent.name == "crlf" and Path(path).name == "w.py":
            raise KeyError("boom")
        return real_lazily(source, path)

    monkeypatch.setattr(summary, "summarize", failing)
    monkeypatch.setattr(summary, "summarize_lazily", failing_lazily)
    options = CheckOptions(tuple(select_interfaces(None)))
    findings = check_files(sorted(tmp_path.rglob("*.py")), options, Project()).findings
    assert {(Path(f.path).parent.name, f.code) for f in findings} == {("crlf", "EGL999"), ("tabs", "EGL001")}
    debug = Project()
    debug.debug = True
    with pytest.raises(KeyError):
        check_files(sorted(tmp_path.rglob("*.py")), options, debug)
    monkeypatch.setattr(sys, "argv", ["eaglelint", "--debug", "check", str(tmp_path)])
    with pytest.raises(KeyError):  # --debug: the traceback, not a finding
        cli.main()


@pytest.mark.parametrize("family", [delegation, aux_path], ids=["delegation", "aux_path"])
def test_internal_error_on_one_wrapper_is_reported_at_its_class_and_the_others_are_checked(
        family, tmp_path, monkeypatch):
    for name in ("crlf", "tabs"):
        make_case(tmp_path, name)
    real = family.check
    judged = []

    def failing(context, cls):
        judged.append(Path(cls.path).parent.name)
        if Path(cls.path).parent.name == "crlf":
            raise RecursionError if family is aux_path else ValueError("boom")
        return real(context, cls)

    monkeypatch.setattr(family, "check", failing)
    options = CheckOptions(tuple(select_interfaces(None)))
    findings = check_files(sorted(tmp_path.rglob("*.py")), options, Project()).findings
    assert sorted(judged) == ["crlf", "tabs"]  # the family ran on both wrappers
    failed = [f for f in findings if Path(f.path).parent.name == "crlf" and f.code == "EGL999"]
    assert [(f.line, f.class_name) for f in failed] == [(4, "Wrapper")]
    assert {f.method for f in findings if Path(f.path).parent.name == "tabs" and f.code == "EGL001"} == FIXED


def test_cli_on_a_tree_of_every_hostile_case_reports_each_and_never_tracebacks(tmp_path):
    for name in CASES:
        make_case(tmp_path, name)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.py")}
    done = eaglelint("check", "--output-format", "json", tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr and done.stderr == ""
    rows = json.loads(done.stdout)
    for name, (_, codes, _) in CASES.items():
        assert {r["code"] for r in rows if Path(r["path"]).parent.name == name} == codes, name

    fixed = eaglelint("fix", "--write", tmp_path)
    assert fixed.returncode == 1 and "Traceback" not in fixed.stdout + fixed.stderr
    for name, (_, codes, rewritten) in CASES.items():
        w = tmp_path / name / "w.py"
        assert (w.read_bytes() != before[w]) == rewritten, name
        assert (tmp_path / name / "lm.py").read_bytes() == LM
        if "EGL999" in codes:
            assert f"{name}/w.py" in fixed.stdout, name  # reported, with its path
    again = json.loads(eaglelint("check", "--output-format", "json", tmp_path).stdout)
    assert not [r for r in again if r["code"] in ("EGL001", "EGL002")]


@pytest.mark.slow
def test_file_of_200k_lines_is_checked_and_fixed(tmp_path):
    case = tmp_path / "big"
    case.mkdir()
    (case / "lm.py").write_bytes(LM)
    filler = "".join(f"x{i} = f(x{i - 1}, {i})  # generated\n" for i in range(1, 200_001))
    (case / "w.py").write_text(filler + wrapper())
    project = Project()
    findings = check(case, project).findings
    assert {(f.code, f.line) for f in findings} == {("EGL001", 200_004)}
    fixmod.write_fix(fixmod.plan_fixes(findings, project).files[0])
    text = (case / "w.py").read_text()
    assert text.startswith(filler)
    wrapper_class = ast.parse(text).body[-1]
    assert {n.name for n in wrapper_class.body} == {"__init__"} | FIXED


# -- paths ----------------------------------------------------------------------------------------

def test_missing_path_with_fix_reports_it_and_fixes_the_rest(tmp_path):
    case = make_case(tmp_path, "crlf")
    done = eaglelint("fix", "--write", tmp_path / "nope.py", case)
    assert "Traceback" not in done.stdout + done.stderr
    assert "nope.py" in done.stdout and b"def get_embed_and_head" in (case / "w.py").read_bytes()
    alone = eaglelint("fix", "--write", tmp_path / "nope.py")
    assert alone.returncode == 2 and "nope.py" in alone.stderr and "Traceback" not in alone.stderr


def _tree_of_bad_links(root: Path) -> Path:
    good = make_case(root, "good", UTF8)
    (root / "sub").mkdir()
    (root / "sub" / "loop").symlink_to("..")  # directory symlink loop
    (root / "broken.py").symlink_to("nowhere.py")
    (root / "self_loop.py").symlink_to("self_loop.py")
    (root / "zero.py").symlink_to("/dev/zero")  # would read forever
    os.mkfifo(root / "fifo.py")  # would block forever
    return good


BAD_LINKS = {"sub/loop", "broken.py", "self_loop.py", "zero.py", "fifo.py"}


def test_link_loops_broken_links_and_special_files_are_reported_per_path(tmp_path):
    good = _tree_of_bad_links(tmp_path)
    done = eaglelint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr == ""
    rows = json.loads(done.stdout)
    assert {r["path"] for r in rows if r["code"] == "EGL999"} == BAD_LINKS
    assert {r["method"] for r in rows if r["code"] == "EGL001"} == FIXED
    fixed = eaglelint("fix", "--write", ".", cwd=tmp_path)
    for path in BAD_LINKS:
        assert path in fixed.stdout
    assert "Traceback" not in fixed.stdout + fixed.stderr
    assert b"def get_embed_and_head" in (good / "w.py").read_bytes()
    assert os.readlink(tmp_path / "broken.py") == "nowhere.py" and not (tmp_path / "nowhere.py").exists()


def test_only_bad_links_is_nothing_to_check(tmp_path):
    (tmp_path / "broken.py").symlink_to("nowhere.py")
    done = eaglelint("check", tmp_path / "broken.py", tmp_path / "nope.py")
    assert done.returncode == 2 and "broken symbolic link" in done.stderr and "Traceback" not in done.stderr


def test_file_disappearing_between_discovery_and_reading(tmp_path, monkeypatch, capsys):
    gone, kept = make_case(tmp_path, "crlf"), make_case(tmp_path, "tabs")
    real = lint.discover

    def discover_then_delete(paths, *args):
        found = real(paths, *args)
        (gone / "w.py").unlink()
        return found

    monkeypatch.setattr(lint, "discover", discover_then_delete)
    monkeypatch.setattr(sys, "argv", ["eaglelint", "check", "--output-format", "json", str(tmp_path)])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    out, err = capsys.readouterr()
    assert exit_.value.code == 1 and err == ""
    rows = json.loads(out)
    assert {(Path(r["path"]).parent.name, r["code"]) for r in rows} == {("crlf", "EGL999"), ("tabs", "EGL001")}
    assert not (gone / "w.py").exists() and (kept / "w.py").exists()


def test_file_disappearing_before_fix_planning_or_writing(tmp_path):
    case = make_case(tmp_path, "crlf")
    project = Project()
    findings = check(case, project).findings
    (case / "w.py").unlink()
    plan = fixmod.plan_fixes(findings, project)
    assert plan.files == [] and {f.method for f, _ in plan.left} == FIXED

    (case / "w.py").write_bytes(CASES["crlf"][0])
    project = Project()
    plan = fixmod.plan_fixes(check(case, project).findings, project)
    (case / "w.py").unlink()
    with pytest.raises(fixmod.FixError):
        fixmod.write_fix(plan.files[0])
    assert sorted(p.name for p in case.iterdir()) == ["lm.py"]  # not re-created, no temporary file
