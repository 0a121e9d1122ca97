"""Imports a fix adds, on real SGLang 0.5.9 wrappers, land where isort puts them.

SGLang's pre-commit runs isort (black profile); an import the fix adds in the wrong
place would make that hook rewrite the file, a second round for the person fixing.
ruff's isort rules (`I`) are the oracle. Real wrapper files are first brought to
isort's order by ruff itself and stripped of their `typing` import, so that the fix
has to add a `from typing import ...` line (and sometimes more) to a real import
block with standard-library, third-party (torch, transformers) and first-party
(`sglang`) sections; the result must need no change from ruff's `I` rules.
"""

import re
import shutil
import subprocess
import sys

import pytest
from fetch_sglang import models_dir

pytestmark = [pytest.mark.release, pytest.mark.slow]
WRAPPERS = ["kimi_k25.py", "kimi_vl.py", "deepseek_vl2.py", "dots_vlm.py", "pixtral.py", "llavavid.py",
            "qwen2_audio.py", "step3_vl_10b.py", "phi4mm.py", "internvl.py"]
TYPING = re.compile(r"^from typing import (?:\([^)]*\)|[^\n]*)\n", re.MULTILINE)


def ruff_isort(models, *args):
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", "--select", "I",
                           "--config", 'lint.isort.known-first-party=["sglang"]', *args, *WRAPPERS],
                          cwd=models, capture_output=True, text=True)


def test_typing_and_other_imports_the_fix_adds_are_in_isort_order(tmp_path):
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    shutil.copytree(models_dir("0.5.9"), models)
    for name in WRAPPERS:
        path = models / name
        path.write_text(TYPING.sub("", path.read_text()))
    ruff_isort(models, "--fix")
    before = {name: (models / name).read_text() for name in WRAPPERS}
    assert ruff_isort(models).returncode == 0
    done = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--no-cache", "--interface", "all",
                           *WRAPPERS], cwd=models, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    changed = [name for name in WRAPPERS if (models / name).read_text() != before[name]]
    with_typing = [name for name in changed if "\nfrom typing import " in (models / name).read_text()]
    assert len(with_typing) >= 8, changed  # the fix did have to add the typing import
    check = ruff_isort(models, "--diff")
    assert check.returncode == 0, check.stdout
