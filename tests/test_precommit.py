"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit in a
temporary git repository laid out like an SGLang fork (python/sglang/srt/models).

This repository is the hook repository: a snapshot of its working tree (tracked and
untracked, not ignored, files) is committed into a temporary git repo so that the
hooks under test are the ones in this checkout. pre-commit builds its own virtualenv
for `language: python` hooks and pip-installs eaglelint there, so this needs the
package index (for hatchling, click, rich) once per test session.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.slow
MODELS = Path("python/sglang/srt/models")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

DEEPSEEK_V2 = '''\
from typing import List, Optional, Tuple

import torch
from torch import nn


class DeepseekV2ForCausalLM(nn.Module):
    def __init__(self, config, quant_config=None, prefix: str = ""):
        super().__init__()
        self.config = config

    def get_embed_and_head(self) -> Tuple[torch.Tensor, torch.Tensor]:
        return self.model.embed_tokens.weight, self.lm_head.weight

    def set_embed_and_head(self, embed, head):
        self.model.embed_tokens.weight = embed
        self.lm_head.weight = head
{extra}

class DeepseekV3ForCausalLM(DeepseekV2ForCausalLM):
    pass


EntryClass = [DeepseekV2ForCausalLM, DeepseekV3ForCausalLM]
'''
EAGLE3_METHOD = '''
    def set_eagle3_layers_to_capture(self, layer_ids: Optional[List[int]] = None):
        self.capture_aux_hidden_states = True
        self.model.layers_to_capture = [val + 1 for val in layer_ids or []]
'''
KIMI_VL = '''\
from torch import nn

from sglang.srt.models.deepseek_v2 import DeepseekV2ForCausalLM


class KimiVLForConditionalGeneration(nn.Module):
    def __init__(self, config, quant_config=None, prefix: str = ""):
        super().__init__()
        self.vision_tower = nn.Identity()
        self.language_model = DeepseekV2ForCausalLM(config.text_config, quant_config)

    def get_embed_and_head(self):
        return self.language_model.get_embed_and_head()

    def set_embed_and_head(self, embed, head):
        self.language_model.set_embed_and_head(embed, head)


EntryClass = [KimiVLForConditionalGeneration]
'''
KIMI_K25 = '''\
from torch import nn

from sglang.srt.models.deepseek_v2 import DeepseekV3ForCausalLM


class KimiK25ForConditionalGeneration(nn.Module):
    def __init__(self, config, quant_config=None, prefix: str = ""):
        super().__init__()
        self.language_model = DeepseekV3ForCausalLM(config.text_config, quant_config)


EntryClass = [KimiK25ForConditionalGeneration]
'''


def git(*args, cwd, env=None, check=True):
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **GIT_ENV,
                                                                                        **(env or {})})
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This checkout's working tree, committed into a repo pre-commit can clone: (path, commit)."""
    path = tmp_path_factory.mktemp("hook-repo")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO).stdout
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, path / name)
    git("init", "-q", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "snapshot", cwd=path)
    return path, git("rev-parse", "HEAD", cwd=path).stdout.strip()


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return {"PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


@pytest.fixture
def fork(tmp_path, hook_repo, home):
    """A clean SGLang-like fork with the eaglelint hook installed."""
    repo_path, rev = hook_repo
    fork = tmp_path / "fork"
    (fork / MODELS).mkdir(parents=True)
    (fork / MODELS / "deepseek_v2.py").write_text(DEEPSEEK_V2.format(extra=""))
    (fork / MODELS / "kimi_vl.py").write_text(KIMI_VL)
    (fork / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo_path}\n  rev: {rev}\n  hooks:\n  - id: eaglelint\n"
        "  - id: eaglelint-fix\n    stages: [manual]\n")
    git("init", "-q", cwd=fork)
    git("add", "-A", cwd=fork)
    git("commit", "-q", "-m", "base", cwd=fork)
    done = precommit("install", cwd=fork, env=home)
    assert done.returncode == 0, done.stdout + done.stderr
    return fork


def precommit(*args, cwd, env):
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, **env})


def commit(fork, home, message):
    git("add", "-A", cwd=fork)
    done = git("commit", "-m", message, cwd=fork, env=home, check=False)
    return done.returncode, done.stdout + done.stderr


def test_commit_adding_a_wrapper_without_delegation_is_rejected_then_fixed(fork, home):
    (fork / MODELS / "kimi_k25.py").write_text(KIMI_K25)
    rc, out = commit(fork, home, "add kimi_k25")
    assert rc != 0, out
    assert "EGL001" in out and "kimi_k25.py" in out and "get_embed_and_head" in out
    fixed = precommit("run", "--hook-stage", "manual", "eaglelint-fix", "--files", str(MODELS / "kimi_k25.py"),
                      cwd=fork, env=home)
    assert "files were modified by this hook" in fixed.stdout, fixed.stdout + fixed.stderr
    text = (fork / MODELS / "kimi_k25.py").read_text()
    assert "def get_embed_and_head(" in text and "def set_embed_and_head(" in text
    rc, out = commit(fork, home, "add kimi_k25, with delegations")
    assert rc == 0, out
    assert git("log", "--format=%s", "-1", cwd=fork).stdout.strip() == "add kimi_k25, with delegations"


def test_changing_only_the_wrapped_class_rejects_the_commit_for_the_unchanged_wrapper(fork, home):
    (fork / MODELS / "deepseek_v2.py").write_text(DEEPSEEK_V2.format(extra=EAGLE3_METHOD))
    rc, out = commit(fork, home, "deepseek_v2: EAGLE-3 capture")
    assert rc != 0, out
    assert "kimi_vl.py" in out and "set_eagle3_layers_to_capture" in out and "checked because" in out
    before = (fork / MODELS / "kimi_vl.py").read_text()
    given_only = precommit("run", "--hook-stage", "manual", "eaglelint-fix", "--files",
                           str(MODELS / "deepseek_v2.py"), cwd=fork, env=home)
    # fix never writes outside the files it is given: it names the dependent instead
    assert (fork / MODELS / "kimi_vl.py").read_text() == before
    assert "kimi_vl.py" in given_only.stdout and "eaglelint fix" in given_only.stdout
    precommit("run", "--hook-stage", "manual", "eaglelint-fix", "--files", str(MODELS / "kimi_vl.py"),
              cwd=fork, env=home)
    assert "def set_eagle3_layers_to_capture(" in (fork / MODELS / "kimi_vl.py").read_text()
    rc, out = commit(fork, home, "deepseek_v2: EAGLE-3 capture, kimi_vl delegates it")
    assert rc == 0, out


def test_readme_snippet_names_the_hooks_this_repo_defines():
    import yaml  # pre-commit's own dependency

    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["eaglelint"]["entry"] == "eaglelint check"
    assert hooks["eaglelint-fix"]["entry"] == "eaglelint fix --write"
    assert all(h["language"] == "python" and h["types"] == ["python"] for h in hooks.values())
    readme = (REPO / "README.md").read_text()
    snippet = readme.split("## Use in an SGLang fork", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    used = {h["id"] for repo in yaml.safe_load(snippet)["repos"] for h in repo["hooks"]}
    assert used == set(hooks)


def test_readme_install_line_and_hook_snippet_work_with_the_placeholders_replaced(tmp_path, hook_repo, home):
    """The README's `pip install git+...@COMMIT` into a fresh venv and its pre-commit snippet in a
    fork, both as written, with OWNER's repository URL and COMMIT replaced by a local clone and
    one of its commits."""
    repo_path, rev = hook_repo
    readme = (REPO / "README.md").read_text().replace("https://github.com/OWNER/eaglelint", f"file://{repo_path}")
    readme = readme.replace("COMMIT", rev)
    install = readme.split("## Install\n", 1)[1].split("\n## ", 1)[0]
    pip_args = next(line.split("#")[0].split() for line in install.splitlines() if line.strip().startswith("pip "))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    installed = subprocess.run([venv / "bin" / "python", "-m", *pip_args], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    fork = tmp_path / "fork"
    (fork / MODELS).mkdir(parents=True)
    (fork / MODELS / "deepseek_v2.py").write_text(DEEPSEEK_V2.format(extra=""))
    (fork / MODELS / "kimi_k25.py").write_text(KIMI_K25)
    checked = subprocess.run([venv / "bin" / "eaglelint", "check", "--no-cache", MODELS], cwd=fork,
                             capture_output=True, text=True)
    assert checked.returncode == 1 and "EGL001" in checked.stdout, checked.stdout + checked.stderr
    snippet = readme.split("## Use in an SGLang fork", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    (fork / ".pre-commit-config.yaml").write_text(snippet)
    git("init", "-q", cwd=fork)
    git("add", "-A", cwd=fork)
    hooked = precommit("run", "--all-files", cwd=fork, env=home)
    assert hooked.returncode == 1, hooked.stdout + hooked.stderr
    assert "EGL001" in hooked.stdout and "kimi_k25.py" in hooked.stdout
