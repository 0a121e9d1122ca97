"""What a person at a terminal sees: a progress bar only on a TTY and only for long
runs, `--quiet`, and an example in every command's --help."""

import os
import pty
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO
from test_cli import run

from eaglelint.cli import cli

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
DEPENDENTS = FIXTURES / "dependents" / "sglang" / "srt" / "models"


def run_on_tty(*args):
    """Run eaglelint with stdin, stdout and stderr on a pseudo-terminal; all it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "eaglelint", *map(str, args)], stdin=slave, stdout=slave,
                            stderr=slave, cwd=REPO, env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"})
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    proc.wait()
    return proc.returncode, out.decode(errors="replace")


@pytest.fixture
def many_files(tmp_path):
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", "wrapper_plain_assign.py"):
        (models / name).write_text((MODELS / name).read_text())
    for i in range(45):
        (models / f"layer_{i:02d}.py").write_text(f"def layer_{i}(x):\n    return x\n")
    return models


def test_progress_bar_on_a_terminal_for_a_long_run(many_files):
    rc, out = run_on_tty("check", many_files)
    assert rc == 1
    assert "Checking" in out and "/48" in out  # the bar counts the 48 files
    assert "EGL001" in out


def test_no_progress_bar_when_piped_or_quiet_or_short(many_files):
    piped = run("check", many_files)
    assert "Checking" not in piped.stdout + piped.stderr and "EGL001" in piped.stdout
    rc, quiet = run_on_tty("check", "--quiet", many_files)
    assert "Checking" not in quiet and "EGL001" in quiet
    rc, short = run_on_tty("check", *sorted(MODELS.glob("*.py"))[:25])  # done before a bar is worth drawing
    assert "Checking" not in short and "EGL001" in short


def test_quiet_prints_only_findings():
    done = run("check", "--quiet", MODELS)
    lines = done.stdout.splitlines()
    assert done.returncode == 1 and len(lines) >= 40
    assert all(re.match(r"\S+\.py:\d+:\d+ EGL\d{3} ", line) for line in lines)


def test_quiet_keeps_the_reason_for_a_dependent_on_the_same_line():
    done = run("check", "--quiet", DEPENDENTS / "deepseek_v2.py")
    lines = done.stdout.splitlines()
    assert lines and all(re.match(r"\S+\.py:\d+:\d+ EGL\d{3} .*checked because it depends", ln) for ln in lines)


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_help_shows_an_example(command):
    done = run(command, "--help")
    assert done.returncode == 0
    assert re.search(r"Examples?:\n\s+eaglelint " + command, done.stdout), done.stdout


def test_top_level_help_shows_examples():
    done = run("--help")
    assert re.search(r"Examples?:\n\s+eaglelint check", done.stdout)
