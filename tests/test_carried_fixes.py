"""Fixes carried on findings: planned once, when the file is checked; the fix stage applies them.

Why these tests: a finding's fix is planned by its check and kept with it in the run
cache, so a warm run must not plan again; the fix stage must apply exactly the fixes of
the findings it is given (one suppressed or ignored finding leaves its member and its
imports unwritten), and must refuse a fix planned on bytes the file no longer holds.
"""

import ast
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_fix_fixtures import eaglelint

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.analysis.store.cache_codec import decode, encode
from eaglelint.checks import registry
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import members as members_fix
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

OPTIONS = CheckOptions(tuple(select_interfaces(None)))
TYPING_MERGE = FIXTURES / "fix" / "typing_merge"


def check(paths: list[Path], project: Project, options: CheckOptions = OPTIONS):
    return check_files(discover(paths).files, options, project)


def test_a_warm_run_takes_the_fixes_from_the_cache_and_plans_nothing(tmp_path, monkeypatch):
    tree = FIXTURES / "check"
    cold = check([tree], Project(SummaryCache(tmp_path))).findings
    assert any(f.fix is not None for f in cold)

    def refuse(*args, **kwargs):
        raise AssertionError("a fix was planned on a warm run")

    for family in registry.FAMILIES:
        if hasattr(family, "FIX"):
            monkeypatch.setattr(family, "FIX", refuse)
    monkeypatch.setattr(registry, "plan_fixes", refuse)
    warm_project = Project(SummaryCache(tmp_path))
    warm = check([tree], warm_project).findings
    assert warm_project.cache.hits > 0
    assert warm == cold


def test_every_fixture_run_result_with_its_fixes_survives_the_cache_round_trip():
    fixed = 0
    for folder in sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir()) + [FIXTURES / "check"]:
        result = check([folder], Project())
        fixed += sum(f.fix is not None for f in result.findings)
        deps = [("/some/dependency.py", "0" * 64)]
        assert decode(encode((result, deps))) == (result, deps), folder
    assert fixed > 20  # the round trip covered findings that carry fixes, not only bare ones


def test_each_fixable_finding_carries_its_fix_or_the_reason(tmp_path):
    for folder in sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir()):
        for f in check([folder], Project()).findings:
            assert f.fixable == (f.fix is not None), (folder.name, f.code, f.method, f.fix_refusal)


def test_a_finding_fixed_alone_adds_only_its_member_and_its_imports(tmp_path):
    """typing_merge's two findings need different names: set_eagle3_layers_to_capture's
    signature reads Optional and List, set_embed_and_head's reads torch and Dict. With the
    second ignored, the fix writes the first member and merges only Optional and List into
    the typing line (sorted, as the line is: isort's order); torch is not imported."""
    work = tmp_path / "case"
    shutil.copytree(TYPING_MERGE, work, ignore=shutil.ignore_patterns("*.expected"))
    before = (work / "wrapper.py").read_text()
    done = eaglelint("fix", "--write", "--isolated", "--ignore", "EGL002", ".", cwd=work)
    assert done.returncode == 0, done.stderr
    after = (work / "wrapper.py").read_text()
    tree = ast.parse(after)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    methods = [n.name for n in cls.body if isinstance(n, ast.FunctionDef)]
    assert methods == ["__init__", "load_weights", "set_eagle3_layers_to_capture"]
    old_line = "from typing import Iterable, Tuple  # kept: a comment on the import line"
    new_line = "from typing import Iterable, List, Optional, Tuple  # kept: a comment on the import line"
    assert old_line in before and after.startswith(before.replace(old_line, new_line))  # the rest only added
    assert "import torch" not in after and "Dict" not in after


def test_a_file_changed_between_check_and_fix_is_refused_with_the_reason(tmp_path):
    work = tmp_path / "case"
    shutil.copytree(TYPING_MERGE, work, ignore=shutil.ignore_patterns("*.expected"))
    project = Project()
    findings = check([work], project).findings
    assert findings and all(f.fix is not None for f in findings)
    changed = (work / "wrapper.py").read_text().replace("super().__init__()", "super().__init__()  # edited")
    (work / "wrapper.py").write_text(changed)
    plan = fixmod.plan_fixes(findings, Project())  # a later process: it never read the old bytes
    assert plan.files == []
    assert [why for _, why in plan.left] == ["file changed since it was checked (another fix running?); run again"] * 2
    assert (work / "wrapper.py").read_text() == changed


@pytest.mark.parametrize("style", ["raise", "guard"])
def test_the_fix_style_is_part_of_the_check_and_of_its_cache_key(style, tmp_path):
    """The same tree checked with two styles: the carried fixes differ, and the cached run of
    one style is not served to the other."""
    cache = SummaryCache(tmp_path)
    other = "guard" if style == "raise" else "raise"
    check([FIXTURES / "fix" / "held_class_varies"], Project(cache), CheckOptions(OPTIONS.interfaces, style=other))
    mine = check([FIXTURES / "fix" / "held_class_varies"], Project(cache),
                 CheckOptions(OPTIONS.interfaces, style=style)).findings
    fresh = check([FIXTURES / "fix" / "held_class_varies"], Project(),
                  CheckOptions(OPTIONS.interfaces, style=style)).findings
    assert mine == fresh
    text = "\n".join(line for f in mine if f.fix for e in f.fix.edits for line in e.lines)
    assert ("if hasattr(" in text) == (style == "guard")


def _without_the_summary_shortcut(monkeypatch):
    monkeypatch.setattr(members_fix, "place_from_summary", lambda *args: None)


def test_fixes_placed_from_the_summary_are_those_placed_from_the_syntax_tree(monkeypatch):
    """The members planner places methods from the summary where it can (no second parse):
    on every fixture, the fixes are the ones the syntax tree gives."""
    folders = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir()) + [FIXTURES / "check"]
    placed = []
    shortcut = members_fix.place_from_summary
    monkeypatch.setattr(members_fix, "place_from_summary", lambda *args: placed.append(shortcut(*args)) or placed[-1])
    quick = [check([folder], Project()).findings for folder in folders]
    assert sum(p is not None for p in placed) > 10 and None in placed  # both ways were taken
    _without_the_summary_shortcut(monkeypatch)
    assert quick == [check([folder], Project()).findings for folder in folders]


def test_a_fix_its_planner_refuses_is_not_called_fixable(tmp_path):
    """vllm_marker_delegates' DeepWrapper must forward its language model's own
    set_aux_hidden_state_layers; with a parameter default there, the marker fix refuses to
    forward it (fix/marker.py). The check plans the fix, so the finding says so itself:
    not fixable, with that reason, as `fix` then leaves it."""
    work = tmp_path / "case"
    shutil.copytree(FIXTURES / "fix" / "vllm_marker_delegates", work, ignore=shutil.ignore_patterns("*.expected"))
    lm = (work / "lm.py").read_text()
    old = "def set_aux_hidden_state_layers(self, layers: tuple[int, ...]) -> None:"
    assert lm.count(old) == 1
    (work / "lm.py").write_text(lm.replace(old, old.replace("...]", "...] = (2,)")))
    options = CheckOptions(tuple(select_interfaces(["vllm"])))
    project = Project()
    deep = [f for f in check([work], project, options).findings if f.class_name == "DeepWrapper"]
    assert len(deep) == 1 and deep[0].fix is None and not deep[0].fixable
    assert "has parameter defaults" in deep[0].fix_refusal
    assert fixmod.plan_fixes(deep, project).left == [(deep[0], deep[0].fix_refusal)]
