"""A fork of real SGLang 0.5.9, laid out as SGLang's repository (python/sglang/...,
python/pyproject.toml, .pre-commit-config.yaml), with this checkout as the hook
repository (committed, and named at that commit as the README's `rev: COMMIT` says), driven by the real
pre-commit and git as a team would: a rejected commit, the fix command the hook
prints, `--add-noqa`, a baseline, and black reformatting a suppressed class header.

pre-commit builds the hooks' environments by pip-installing this repository (and
black, pinned, from the package index); they are built once per test session in one
PRE_COMMIT_HOME and reused by every test here.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from fetch_sglang import models_dir
from test_precommit import git, precommit

pytestmark = [pytest.mark.release, pytest.mark.slow]
MODELS = Path("python/sglang/srt/models")
BLACK = "black==24.10.0"
HOOKS = """\
- repo: {repo}
  rev: {rev}
  hooks:
  - id: eaglelint
    files: ^python/sglang/srt/models/
  - id: eaglelint-fix
    files: ^python/sglang/srt/models/
    stages: [manual]
"""
BLACK_HOOK = f"""\
- repo: local
  hooks:
  - id: black
    name: black
    entry: black
    language: python
    additional_dependencies: ["{BLACK}"]
    types: [python]
    files: ^python/sglang/srt/models/vision_only\\.py$
"""
VISION_ONLY = '''\
from torch import nn

from sglang.srt.models.llama import LlamaForCausalLM


class VisionTowerMixinWithAVeryLongDescriptiveName:
    pass


{header}
    def __init__(self, config, quant_config=None, prefix: str = ""):
        super().__init__()
        self.language_model = LlamaForCausalLM(config, quant_config)


EntryClass = [VisionOnlyForConditionalGeneration]
'''.format(header="class VisionOnlyForConditionalGeneration(nn.Module, VisionTowerMixinWithAVeryLongDescriptiveName):"
                  "  # noqa: EGL001, EGL002 -- vision only")
NEW_GAP = '''\
from torch import nn

from sglang.srt.models.llama import LlamaForCausalLM


class NewGapForConditionalGeneration(nn.Module):
    def __init__(self, config, quant_config=None, prefix: str = ""):
        super().__init__()
        self.language_model = LlamaForCausalLM(config, quant_config)


EntryClass = [NewGapForConditionalGeneration]
'''


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This checkout's working tree, committed in a repo pre-commit can clone: (path, commit)."""
    path = tmp_path_factory.mktemp("eaglelint-hook-repo")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, path / name)
    git("init", "-q", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "release", cwd=path)
    return path, git("rev-parse", "HEAD", cwd=path).stdout.strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One PRE_COMMIT_HOME for the module: hook environments are built once."""
    return {"PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


def make_fork(root: Path, hook_repo: tuple[Path, str], home: dict, extra: str = "") -> Path:
    fork = root / "fork"
    shutil.copytree(models_dir("0.5.9"), fork / MODELS)
    (fork / "python" / "pyproject.toml").write_text('[project]\nname = "sglang"\nversion = "0.5.9"\n')
    (fork / ".pre-commit-config.yaml").write_text("repos:\n" + extra + HOOKS.format(repo=hook_repo[0],
                                                                                     rev=hook_repo[1]))
    git("init", "-q", cwd=fork)
    git("add", "-A", cwd=fork)
    git("commit", "-q", "-m", "SGLang 0.5.9", cwd=fork)
    done = precommit("install", cwd=fork, env=home)
    assert done.returncode == 0, done.stdout + done.stderr
    return fork


def commit(fork: Path, home: dict, message: str, *args: str) -> tuple[int, str]:
    done = git("commit", *args, "-m", message, cwd=fork, env=home, check=False)
    return done.returncode, done.stdout + done.stderr


def touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n# touched\n")


def eaglelint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_rejected_commit_prints_a_fix_command_that_works(tmp_path, hook_repo, home):
    fork = make_fork(tmp_path, hook_repo, home)
    touch(fork / MODELS / "deepseek_v2.py")
    rc, out = commit(fork, home, "deepseek_v2: touched", "-a")
    assert rc != 0, out
    assert "kimi_k25.py" in out and "checked because" in out
    # the README's warning: without --files, nothing is staged after a rejected `commit -a`
    staged_only = precommit("run", "eaglelint-fix", "--hook-stage", "manual", cwd=fork, env=home)
    assert "no files to check" in staged_only.stdout, staged_only.stdout
    printed = next(line.strip() for line in out.splitlines()
                   if line.strip().startswith("pre-commit run eaglelint-fix --hook-stage manual --files "))
    fixed = precommit(*shlex.split(printed)[1:], cwd=fork, env=home)
    assert "files were modified by this hook" in fixed.stdout, fixed.stdout + fixed.stderr
    assert "def set_eagle3_layers_to_capture(" in (fork / MODELS / "kimi_vl.py").read_text()
    rc, out = commit(fork, home, "deepseek_v2: touched, dependents delegate", "-a")
    assert rc == 0, out


def test_add_noqa_then_the_whole_tree_passes_and_commits_go_through(tmp_path, hook_repo, home):
    fork = make_fork(tmp_path, hook_repo, home)
    done = eaglelint("check", "--add-noqa", "--noqa-reason", "known gap", MODELS, cwd=fork)
    assert done.returncode == 0 and "Added " in done.stdout, done.stdout + done.stderr
    git("add", "-A", cwd=fork)
    everything = precommit("run", "eaglelint", "--all-files", cwd=fork, env=home)
    assert everything.returncode == 0, everything.stdout  # llava's EGL010 is info: shown, not failing
    touch(fork / MODELS / "llama.py")
    rc, out = commit(fork, home, "llama: touched", "-a")
    assert rc == 0, out


def test_baseline_lets_old_gaps_through_and_still_catches_a_new_one(tmp_path, hook_repo, home):
    fork = make_fork(tmp_path, hook_repo, home)
    pyproject = fork / "python" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.eaglelint]\nbaseline = "eaglelint-baseline.json"\n')
    done = eaglelint("check", "--baseline", "python/eaglelint-baseline.json", "--write-baseline", MODELS, cwd=fork)
    assert done.returncode == 0, done.stderr
    git("add", "-A", cwd=fork)
    rc, out = commit(fork, home, "eaglelint baseline")
    assert rc == 0, out
    touch(fork / MODELS / "llama.py")  # 18 recorded findings depend on it
    rc, out = commit(fork, home, "llama: touched", "-a")
    assert rc == 0, out
    (fork / MODELS / "new_gap.py").write_text(NEW_GAP)
    git("add", "-A", cwd=fork)
    rc, out = commit(fork, home, "a new wrapper")
    assert rc != 0, out
    flagged = [line for line in out.splitlines() if re.match(r"\s+\d+:\d+ EGL\d+ ", line)]
    assert len(flagged) == 3 and all("NewGapForConditionalGeneration" in line for line in flagged)


def test_black_moves_a_suppression_to_the_header_end_and_it_still_holds(tmp_path, hook_repo, home):
    fork = make_fork(tmp_path, hook_repo, home, extra=BLACK_HOOK)
    path = fork / MODELS / "vision_only.py"
    path.write_text(VISION_ONLY)
    git("add", "-A", cwd=fork)
    rc, out = commit(fork, home, "vision-only wrapper")
    assert rc != 0 and "files were modified by this hook" in out, out  # black reformatted it
    header = [line for line in path.read_text().splitlines() if "VisionOnlyForConditionalGeneration(" in line
              or line.startswith("):")]
    assert header[0] == "class VisionOnlyForConditionalGeneration("
    assert header[1].startswith("):  # noqa: EGL001, EGL002")
    git("add", "-A", cwd=fork)
    rc, out = commit(fork, home, "vision-only wrapper, formatted")
    assert rc == 0, out
    done = eaglelint("check", "--report-unused-suppressions", MODELS / "vision_only.py", cwd=fork)
    assert done.returncode == 0, done.stdout
