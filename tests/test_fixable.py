"""`fixable` is true exactly where `eaglelint fix` writes the change, in every output
(JSON, text statistics and the fix command all read `Finding.fixable`)."""

import os
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import load_interfaces, select_interfaces

TREES = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir()) + [
    FIXTURES / "check" / "sglang", FIXTURES / "check" / "vllm", FIXTURES / "behaviour"]


def _packs(tree: Path) -> list[str] | None:
    args = tree / "args"
    if tree.name == "vllm" or (args.is_file() and "vllm" in args.read_text()):
        return ["vllm"]
    if args.is_file() and "--interface" in args.read_text():
        return args.read_text().split("--interface")[1].split()[0].split(",")
    return None


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_fixable_exactly_where_fix_writes(tree):
    project = Project()
    options = CheckOptions(tuple(select_interfaces(_packs(tree))))
    findings = check_files(discover([tree]).files, options, project).findings
    plan = fixmod.plan_fixes(findings, project, roots=[tree])
    written = {(os.path.abspath(ff.path), cls, member) for ff in plan.files for cls, member in ff.added}
    fixable = {(os.path.abspath(f.path), f.class_name, f.method or load_interfaces()[f.interface].marker)
               for f in findings if f.fixable}
    assert fixable == written


def test_the_refused_shapes_are_found_and_not_fixable():
    tree = FIXTURES / "fix" / "refused_shapes"
    findings = check_files(discover([tree]).files, CheckOptions(tuple(select_interfaces(None))), Project()).findings
    assert {f.method for f in findings} == {"set_eagle3_layers_to_capture", "get_embed_and_head",
                                            "set_embed_and_head"}
    assert not any(f.fixable for f in findings) and all(f.fix_refusal for f in findings)
