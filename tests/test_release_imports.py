"""Imports a fix adds, on real SGLang 0.5.9 wrappers, land where isort puts them.

SGLang's pre-commit runs isort (black profile); an import the fix adds in the wrong
place would make that hook rewrite the file, a second round for the person fixing.
ruff's isort rules (`I`) and isort itself (pinned in the test extras) are the
oracles. Real wrapper files are first brought to isort's order and stripped of their
`typing` import, so that the fix has to add a `from typing import ...` line to a real
import block with standard-library, third-party (torch, transformers) and
first-party (`sglang`) sections; the result must need no change from either.
"""

import re
import shutil
import subprocess
import sys

import pytest
from fetch_sglang import models_dir

pytestmark = [pytest.mark.release, pytest.mark.slow]
# pixtral.py is left out: isort and ruff order its two `from transformers... import (...)` lines
# (one with an `as` alias) differently, whatever eaglelint does
WRAPPERS = ["kimi_k25.py", "kimi_vl.py", "deepseek_vl2.py", "dots_vlm.py", "llavavid.py", "qwen2_audio.py",
            "step3_vl_10b.py", "phi4mm.py", "internvl.py"]
TYPING = re.compile(r"^from typing import (?:\([^)]*\)|[^\n]*)\n", re.MULTILINE)


def ruff_isort(root, *args):
    """ruff's `I` rules, from the repository root (run inside models/, its `transformers.py`
    would make `transformers` look first party)."""
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "I",
                           "--config", 'lint.isort.known-first-party=["sglang"]', *args,
                           *(f"python/sglang/srt/models/{name}" for name in WRAPPERS)],
                          cwd=root, capture_output=True, text=True)


def isort(root, *args):
    """isort as SGLang's hook runs it (black profile), from the repository root."""
    return subprocess.run([sys.executable, "-m", "isort", "--profile", "black", "-p", "sglang", *args,
                           *(f"python/sglang/srt/models/{name}" for name in WRAPPERS)],
                          cwd=root, capture_output=True, text=True)


def test_typing_and_other_imports_the_fix_adds_are_in_isort_order(tmp_path):
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    shutil.copytree(models_dir("0.5.9"), models)
    for name in WRAPPERS:
        path = models / name
        path.write_text(TYPING.sub("", path.read_text()))
    ruff_isort(tmp_path, "--fix")
    isort(tmp_path)
    before = {name: (models / name).read_text() for name in WRAPPERS}
    assert ruff_isort(tmp_path).returncode == 0
    assert isort(tmp_path, "--check-only").returncode == 0
    done = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--no-cache", "--interface", "all",
                           *WRAPPERS], cwd=models, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    changed = [name for name in WRAPPERS if (models / name).read_text() != before[name]]
    with_typing = [name for name in changed if "\nfrom typing import " in (models / name).read_text()]
    assert len(with_typing) >= 7, changed  # the fix did have to add the typing import
    check = ruff_isort(tmp_path, "--diff")
    assert check.returncode == 0, check.stdout
    again = isort(tmp_path, "--check-only", "--diff")
    assert again.returncode == 0, again.stdout + again.stderr
