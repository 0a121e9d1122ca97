"""A warm `check` that only reports loads only what it needs: no rich, no other report
format, no fixer, no analysis (a whole-run cache hit needs none of it). Measured in
bench/bench_check.py; guarded here by the modules a real process ends up holding, and
by the shortcuts it takes giving the same report."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO

from eaglelint.analysis.syntax.directives import comments_and_spans, may_suppress, noqa_in

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
# what a warm plain report must not import (each is imported by the run that needs it)
NOT_ON_THE_WARM_PATH = ("rich", "eaglelint.output.sarif", "eaglelint.output.junit", "eaglelint.fix.plan",
                        "eaglelint.fix.owner", "eaglelint.pipeline.support", "eaglelint.analysis.python.summary",
                        "eaglelint.analysis.python.resolve", "eaglelint.analysis.sglang.dependents",
                        "eaglelint.checks.registry", "eaglelint.pipeline.baseline", "eaglelint.fix.edits",
                        "eaglelint.fix.noqa", "difflib", "xml", "importlib.metadata")
RUN_AND_LIST_MODULES = """\
import json, sys
from eaglelint.cli import main
out, sys.argv = sys.argv[1], ["eaglelint", *sys.argv[2:]]
try:
    main()
finally:
    with open(out, "w") as fh:
        json.dump(sorted(sys.modules), fh)
"""


def loaded(modules: list[str], names=NOT_ON_THE_WARM_PATH) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in names)]


def run_listing_modules(tmp_path, *args, env=None):
    """Run `eaglelint ARGS` in a fresh interpreter; its stdout, and every module it imported."""
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, out, *map(str, args)], capture_output=True,
                          text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})})
    assert "Traceback" not in done.stderr, done.stderr
    return done, json.loads(out.read_text())


def test_importing_the_command_line_loads_no_report_writer_fixer_or_analysis():
    code = "import eaglelint.cli, json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert loaded(json.loads(done.stdout)) == []


def test_a_warm_plain_check_loads_no_rich_no_other_format_no_fixer_no_analysis(tmp_path):
    tree = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(MODELS, tree)
    args = ("check", "--cache-dir", tmp_path / "cache", "sglang")
    cold, cold_modules = run_listing_modules(tmp_path, *args)
    warm, warm_modules = run_listing_modules(tmp_path, *args)
    assert warm.returncode == cold.returncode == 1 and warm.stdout == cold.stdout
    # the cold run analysed
    assert "eaglelint.analysis.python.resolve" in cold_modules and "eaglelint.analysis.python.summary" in cold_modules
    assert loaded(warm_modules) == []
    assert "eaglelint.pipeline.lint" in warm_modules and "click" in warm_modules  # it did run
    # a format asked for is still loaded (the guard above is not vacuous)
    _, sarif_modules = run_listing_modules(tmp_path, "check", "--cache-dir", tmp_path / "cache",
                                           "--output-format", "sarif", "sglang")
    assert "eaglelint.output.sarif" in sarif_modules


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("args", [
    (MODELS,),
    ("--statistics", MODELS),
    (FIXTURES / "dependents" / "sglang" / "srt" / "models" / "deepseek_v2.py",),
    (MODELS / "ok_delegating.py",),
], ids=["tree", "statistics", "dependents", "clean"])
def test_the_plain_report_has_the_characters_rich_styles_on_a_terminal(args, tmp_path):
    """Piped, the text report is written without rich; FORCE_COLOR makes rich style it as
    on a terminal. Without the colours, both must be the same text."""
    plain, plain_modules = run_listing_modules(tmp_path, "check", "--no-cache", *args, env={"FORCE_COLOR": ""})
    styled, styled_modules = run_listing_modules(tmp_path, "check", "--no-cache", *args, env={"FORCE_COLOR": "1"})
    assert "rich" not in plain_modules and "rich" in styled_modules
    assert "\x1b[" not in plain.stdout and ("\x1b[" in styled.stdout or "--statistics" in args)  # counts: unstyled
    assert ANSI.sub("", styled.stdout) == plain.stdout and plain.stdout.strip()


DIRECTIVE_LINES = [
    "x = 1  # noqa\n", "x = 1  # NOQA\n", "x = 1  # noqa: EGL001\n", "x = 1  # noqa:egl002\n",
    "x = 1  # noqa: F401, EGL001\n", "x = 1  # noqa: F401 EGL001 -- why\n", "x = 1  # noqa:\n",
    "x = 1  # noqa : F401\n", "x = 1  #noqa\n", "x = 1  # type: ignore  # noqa\n", "x = 1  # noqa: F401\tEGL001\n",
    "x = 1  # noqa:\u00a0F401\n", "x = 1  # eaglelint: ignore[EGL001]\n", "# eaglelint: noqa\n",
    "x = 1  # EagleLint: Ignore\n", "x = 1  # noqa: F401\r\n", "x = 1  # noqa\r\n",
]
OTHER_TOOLS_ONLY = ["x = 1  # noqa: F401\n", "x = 1  # noqa:E501,F401\n", "x = 1  # NOQA: B008 -- why\n",
                    "x = 1\n", "# a comment about noqa: E501\n"]


def directives_for_eaglelint(text: str) -> bool:
    """The tokenizer's reading: a comment whose noqa is bare or names an EGL code, or any
    eaglelint directive (those spell `eaglelint`)."""
    comments, _ = comments_and_spans(text)
    for _, comment in comments.values():
        match = noqa_in(comment)
        if match and (match["codes"] is None or any(c.upper().startswith("EGL")
                                                    for c in re.split(r"[\s,]+", match["codes"]))):
            return True
        if "eaglelint" in comment.lower():
            return True
    return False


@pytest.mark.parametrize("line", DIRECTIVE_LINES + OTHER_TOOLS_ONLY)
def test_the_bytes_test_never_skips_a_file_whose_comments_may_silence_an_eaglelint_code(line):
    text = "import os\n" + line + "y = 2\n"
    if directives_for_eaglelint(text):
        assert may_suppress(text.encode())
    if line in OTHER_TOOLS_ONLY:
        assert not may_suppress(text.encode())  # the shortcut does skip the rest


def test_the_bytes_test_keeps_every_suppression_fixture():
    files = sorted((FIXTURES / "suppressions").rglob("*.py")) + sorted(FIXTURES.rglob("*noqa*.py"))
    assert len(files) >= 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        if directives_for_eaglelint(text):
            assert may_suppress(path.read_bytes()), path
