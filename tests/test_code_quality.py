"""The house style that a reviewer would otherwise check by hand.

A module is as long as its one concern needs (no line cap): what a cap stood in for is
checked directly: ruff's C901 (max-complexity in pyproject.toml) bounds how much one
function branches, mypy checks the types on eaglelint/, and tests/test_architecture.py
keeps the layers.
"""

import subprocess
import sys

from conftest import REPO


def test_ruff_clean():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "eaglelint", "tests", "bench",
                           "scripts"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout


def test_mypy_clean():
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout
