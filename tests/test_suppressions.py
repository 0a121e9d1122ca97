"""`# noqa: CODE`, bare `# noqa` and `# eaglelint: ignore[CODE]` on a wrapper's class line
(or a comment line above it). Each fixture under fixtures/suppressions says inline
what is left after suppression (`# expect:`), EGL900 included."""

import json
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_check_fixtures import expected
from test_cli import run

from eaglelint.pipeline.lint import SettingsFinder, lint

TREE = FIXTURES / "suppressions"
FILES = sorted(TREE.rglob("*.py"))
SUPPRESSED = TREE / "sglang" / "srt" / "models"


@pytest.fixture(scope="module")
def findings():
    return lint([TREE], SettingsFinder({"report_unused_suppressions": True})).findings


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_what_is_left_after_suppression_matches_inline_expectations(path, findings):
    found = {(f.line, f.code, f.method) for f in findings if Path(f.path).resolve() == path.resolve()}
    assert found == expected(path)


def test_fixtures_cover_suppressed_kept_and_unused_cases():
    kinds = [expected(p) for p in FILES]
    assert sum(1 for k in kinds if not k) >= 3  # fully suppressed (and lm.py)
    assert sum(1 for k in kinds if any(code == "EGL900" for _, code, _ in k)) >= 2


def test_unused_suppressions_are_reported_only_when_asked():
    assert not [f for f in lint([TREE]).findings if f.code == "EGL900"]


def test_unused_suppression_points_at_the_comment():
    path = TREE / "sglang" / "srt" / "models" / "unused.py"
    f = next(f for f in lint([path], SettingsFinder({"report_unused_suppressions": True})).findings
             if f.code == "EGL900")
    line = path.read_text().splitlines()[f.line - 1]
    assert line[f.column - 1:].startswith("# noqa: EGL001")


def test_cli_flag_and_ignore():
    path = TREE / "sglang" / "srt" / "models" / "EGL900_unused_elsewhere.py"
    assert run("check", path).returncode == 0
    done = run("check", "--report-unused-suppressions", "--output-format", "json", path)
    assert done.returncode == 1 and done.stdout.count('"EGL900"') == 2
    assert run("check", "--report-unused-suppressions", "--ignore", "EGL900", path).returncode == 0
    # --select names the findings to keep; EGL900 is asked for by its own flag and stays
    done = run("check", "--report-unused-suppressions", "--select", "EGL001", "--output-format", "json", path)
    assert done.stdout.count('"EGL900"') == 2


def test_suppressed_findings_are_not_fixed(tmp_path):
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("lm.py", "noqa_bare.py"):
        (models / name).write_bytes((TREE / "sglang" / "srt" / "models" / name).read_bytes())
    before = (models / "noqa_bare.py").read_bytes()
    assert run("fix", "--write", models).returncode == 0
    assert (models / "noqa_bare.py").read_bytes() == before


def test_unknown_code_in_noqa_is_reported_as_unknown_not_unused():
    done = run("check", "--report-unused-suppressions", "--output-format", "json", SUPPRESSED / "unknown_code.py")
    rows = [r for r in json.loads(done.stdout) if r["code"] == "EGL900"]
    assert len(rows) == 1 and "unknown rule code EGL123" in rows[0]["message"]
    assert "unused" not in rows[0]["message"]


@pytest.mark.parametrize("name", ["black_header.py", "noqa_mixed_case.py", "file_level.py", "aux_on_the_call.py"])
def test_cli_honours_moved_case_insensitive_and_file_level_suppressions(name):
    """The command a user types: what a suppression silences is neither reported nor called unused."""
    done = run("check", "--report-unused-suppressions", "--output-format", "json", SUPPRESSED / name)
    rows = json.loads(done.stdout)
    left = {(r["class"], r["code"]) for r in rows}
    expected_left = {("MixedCaseIgnoreVLM", "EGL002")} if name == "noqa_mixed_case.py" else set()
    if name == "aux_on_the_call.py":
        expected_left = {("ClassLineIsNotTheCall", "EGL021"), ("", "EGL900")}
    assert left == expected_left, rows


def test_a_warm_run_takes_every_files_directives_from_the_cache(tmp_path, monkeypatch):
    """The tokenizer pass that finds comments is the dearest part of a warm run: the second
    run over the same bytes must find each file's directives in the cache, and suppress,
    and report unused, exactly as the first run did by tokenizing."""
    from eaglelint.analysis.python.project import Project
    from eaglelint.analysis.store.cache import SummaryCache
    from eaglelint.analysis.syntax import directives

    def run():
        project = Project(cache=SummaryCache(tmp_path / "cache"))
        return lint([TREE], SettingsFinder({"report_unused_suppressions": True}), project).findings

    first = run()
    assert any(f.code == "EGL900" for f in first)  # the run does use directives

    def no_tokenizing(*args, **kwargs):
        raise AssertionError("a file's comments were tokenized again")

    monkeypatch.setattr(directives, "comments", no_tokenizing)
    assert run() == first
