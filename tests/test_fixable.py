"""`fixable` is true exactly where `eaglelint fix` writes the change, in every output
(JSON, text statistics and the fix command all read `Finding.fixable`)."""

import ast
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

TREES = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir()) + [
    FIXTURES / "check" / "sglang", FIXTURES / "check" / "vllm", FIXTURES / "behaviour"]


def _packs(tree: Path) -> list[str] | None:
    args = tree / "args"
    if tree.name == "vllm" or (args.is_file() and "vllm" in args.read_text()):
        return ["vllm"]
    if args.is_file() and "--interface" in args.read_text():
        return args.read_text().split("--interface")[1].split()[0].split(",")
    return None


def _planned(tree: Path) -> tuple[list, fixmod.FixPlan]:
    """The tree's findings, checked with its packs, and the fixes planned for them."""
    project = Project()
    findings = check_files(discover([tree]).files, CheckOptions(tuple(select_interfaces(_packs(tree)))),
                           project).findings
    return findings, fixmod.plan_fixes(findings, project, roots=[tree])


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_fixable_exactly_where_fix_writes(tree):
    findings, plan = _planned(tree)
    written = {(os.path.abspath(ff.path), f.class_name, f.method) for ff in plan.files for f in ff.findings}
    fixable = {(os.path.abspath(f.path), f.class_name, f.method) for f in findings if f.fixable}
    assert fixable == written


def test_the_refused_shapes_are_found_and_not_fixable():
    tree = FIXTURES / "fix" / "refused_shapes"
    findings = check_files(discover([tree]).files, CheckOptions(tuple(select_interfaces(None))), Project()).findings
    assert {f.method for f in findings} == {"set_eagle3_layers_to_capture", "get_embed_and_head",
                                            "set_embed_and_head"}
    assert not any(f.fixable for f in findings) and all(f.fix_refusal for f in findings)


def _classes(tree: ast.AST, prefix: str = "") -> dict[str, ast.ClassDef]:
    """Every class of a module by qualified name (`Outer.Inner`), functions' own classes left out."""
    out: dict[str, ast.ClassDef] = {}
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.ClassDef):
            out[prefix + node.name] = node
            out.update(_classes(node, f"{prefix}{node.name}."))
    return out


def _changes(old: bytes, new: bytes) -> set[tuple[str, str, str]]:
    """What a rewrite did to each class, read off the two syntax trees: methods added, bases
    added (by their last name: `interfaces.SupportsEagle3` is SupportsEagle3) and methods
    whose code changed."""
    before, after = _classes(ast.parse(old)), _classes(ast.parse(new))
    out = set()
    for name, cls in after.items():
        was = before.get(name)
        methods = {n.name: ast.dump(n) for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        had = {} if was is None else {n.name: ast.dump(n) for n in was.body
                                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        out |= {("method", name, m) for m in methods if m not in had}
        out |= {("edit", name, m) for m in methods if m in had and had[m] != methods[m]}
        bases = {ast.unparse(b).split(".")[-1] for b in cls.bases}
        had_bases = set() if was is None else {ast.unparse(b).split(".")[-1] for b in was.bases}
        out |= {("base", name, b) for b in bases - had_bases}
    return out


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_what_fix_reports_writing_is_what_each_rewrite_changes(tree):
    """`fix` counts and lists what it wrote (`Added 3 methods and 1 base class, and edited 2
    methods, in 2 files`) from each rewrite's `writes`: they must be the methods, bases and
    changed methods a comparison of the file's syntax trees before and after finds."""
    findings, plan = _planned(tree)
    for ff in plan.files:
        assert set(ff.writes) == _changes(ff.old, ff.new), ff.path
        assert len(ff.writes) == len(set(ff.writes))


SUMMARY = re.compile(r"Added (\d+) methods?(?: and (\d+) base class(?:es)?,?)?(?: and edited (\d+) methods?,?)? "
                     r"in (\d+) files?\.")


@pytest.mark.parametrize("tree", [FIXTURES / "check" / "sglang", FIXTURES / "fix" / "vllm_marker_delegates"],
                         ids=lambda p: p.name)
def test_fix_write_says_how_many_methods_and_bases_it_added_and_methods_it_edited(tmp_path, tree):
    """The summary line of `fix --write` on a copy, against the syntax trees of every file
    before and after: methods added, bases added, methods changed, files changed. The two
    trees hold owner fixes that edit __init__ and forward, and marker fixes that add a base."""
    work = tmp_path / tree.name
    shutil.copytree(tree, work)
    before = {p: p.read_bytes() for p in work.rglob("*.py")}
    args = ["--interface", "vllm"] if _packs(tree) == ["vllm"] else []
    done = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--no-cache", *args, str(work)],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    changed = {p: old for p, old in before.items() if p.read_bytes() != old}  # a file left alone may not parse
    kinds = Counter(kind for p, old in changed.items() for kind, _, _ in _changes(old, p.read_bytes()))
    found = SUMMARY.search(done.stdout)
    assert found, done.stdout + done.stderr
    assert [int(n or 0) for n in found.groups()] == [kinds["method"], kinds["base"], kinds["edit"], len(changed)]
    assert kinds["edit"] + kinds["base"] > 0  # the case the count is for
