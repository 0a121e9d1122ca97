"""A plain, non-editable `pip install .` into a fresh venv must find the rules data."""

import json
import subprocess
import venv

import pytest
from conftest import FIXTURES, REPO

pytestmark = pytest.mark.slow


def test_wheel_install_ships_rules(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    install = subprocess.run([py, "-m", "pip", "install", "-q", str(REPO)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    # run from tmp_path so the checkout's rules/ cannot be picked up by accident
    where = subprocess.run([py, "-c", "import eaglelint.packs as i; print(i.rules_dir())"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert "site-packages" in where.stdout
    target = FIXTURES / "check" / "sglang" / "srt" / "models" / "wrapper_plain_assign.py"
    done = subprocess.run([env_dir / "bin" / "eaglelint", "check", "--output-format", "json", target],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert len(json.loads(done.stdout)) == 3
