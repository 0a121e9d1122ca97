"""The house style that a reviewer would otherwise check by hand."""

import subprocess
import sys

from conftest import REPO


def test_ruff_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "eaglelint", "tests", "bench",
                           "scripts"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout


def test_modules_stay_small():
    for path in (REPO / "eaglelint").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 320, path.name
