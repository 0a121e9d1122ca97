"""`[tool.eaglelint]` in pyproject.toml: found upward from the checked paths, closest wins,
flags override, `--config FILE` and `--isolated`; bad keys and values are exit 2."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_cli import run

from eaglelint.config import ConfigError, find_config, load_settings

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
WRAPPER = "wrapper_plain_assign.py"  # EGL001 x2 and EGL002, class line 8


@pytest.fixture
def fork(tmp_path):
    """A fork laid out like SGLang's repo: python/sglang/srt/models, pyproject at the root."""
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", WRAPPER):
        shutil.copy(MODELS / name, models / name)
    return tmp_path


def codes(done):
    return sorted(r["code"] for r in json.loads(done.stdout))


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_ignore_in_pyproject_is_applied(fork):
    write(fork / "pyproject.toml", '[project]\nname = "x"\n\n[tool.eaglelint]\nignore = ["EGL002"]\n')
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL001", "EGL001"]


def test_closest_config_wins_and_one_without_the_table_is_passed_over(fork):
    write(fork / "pyproject.toml", '[tool.eaglelint]\nselect = ["EGL002"]\n')
    write(fork / "python" / "pyproject.toml", '[project]\nname = "sglang"\n')  # no [tool.eaglelint]
    write(fork / "python" / "sglang" / "pyproject.toml", '[tool.eaglelint]\nselect = ["EGL001"]\n')
    assert find_config(fork / "python" / "sglang" / "srt" / "models" / WRAPPER) == \
        fork / "python" / "sglang" / "pyproject.toml"
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL001", "EGL001"]
    (fork / "python" / "sglang" / "pyproject.toml").unlink()
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL002"]


def test_flags_override_the_config(fork):
    write(fork / "pyproject.toml", '[tool.eaglelint]\nselect = ["EGL002"]\n')
    assert codes(run("check", "--output-format", "json", "--select", "EGL001", fork / "python")) == \
        ["EGL001", "EGL001"]


def test_isolated_ignores_config_and_config_flag_names_one(fork, tmp_path):
    write(fork / "pyproject.toml", '[tool.eaglelint]\nselect = ["EGL002"]\n')
    assert codes(run("check", "--output-format", "json", "--isolated", fork / "python")) == \
        ["EGL001", "EGL001", "EGL002"]
    other = write(tmp_path / "eaglelint.toml", 'ignore = ["EGL001", "EGL002"]\n')
    done = run("check", "--output-format", "json", "--config", other, fork / "python")
    assert done.returncode == 0 and codes(done) == []
    assert run("check", "--config", other, "--isolated", fork / "python").returncode == 2


def test_exclude_and_per_file_ignores_are_globs_relative_to_the_config(fork):
    write(fork / "pyproject.toml", '[tool.eaglelint]\nexclude = ["python/sglang/srt/models/wrapper_*.py"]\n')
    assert run("check", fork / "python").returncode == 0
    done = run("check", fork / "python" / "sglang" / "srt" / "models" / WRAPPER)  # as pre-commit passes it
    assert done.returncode == 0 and "EGL001" not in done.stdout  # excluded even when named
    write(fork / "pyproject.toml", '[tool.eaglelint.per-file-ignores]\n"python/**/wrapper_plain*.py" = ["EGL001"]\n')
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL002"]


def test_wrapper_attributes_from_config(fork):
    models = fork / "python" / "sglang" / "srt" / "models"
    text = (models / WRAPPER).read_text().replace("self.language_model", "self.llm")
    (models / WRAPPER).write_text(text)
    # found by what it holds with no setting; the setting restricts to the attributes named
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL001", "EGL001", "EGL002"]
    write(fork / "pyproject.toml", '[tool.eaglelint]\nwrapper-attributes = ["language_model", "llm"]\n')
    assert codes(run("check", "--output-format", "json", fork / "python")) == ["EGL001", "EGL001", "EGL002"]
    write(fork / "pyproject.toml", '[tool.eaglelint]\nwrapper-attributes = ["language_model"]\n')
    assert run("check", fork / "python").returncode == 0


def test_fix_style_from_config(fork):
    write(fork / "pyproject.toml", '[tool.eaglelint.fix]\nstyle = "plain"\n')
    diff = run("fix", fork / "python").stdout
    assert "self.language_model.get_embed_and_head()" in diff and "hasattr(" not in diff
    assert "hasattr(" in run("fix", "--style", "guard", fork / "python").stdout


@pytest.mark.parametrize("table, key", [
    ('[tool.eaglelint]\nselct = ["EGL001"]\n', "selct"),
    ('[tool.eaglelint]\nselect = ["EGL123"]\n', "select"),
    ('[tool.eaglelint]\nignore = "EGL001,"\n', "ignore"),
    ('[tool.eaglelint]\ninterfaces = ["eagle9"]\n', "interfaces"),
    ('[tool.eaglelint]\nwrapper-attributes = ["not an attr"]\n', "wrapper-attributes"),
    ('[tool.eaglelint]\nexclude = [1]\n', "exclude"),
    ('[tool.eaglelint]\ndependents = "yes"\n', "dependents"),
    ('[tool.eaglelint.fix]\nstyle = "fancy"\n', "style"),
    ('[tool.eaglelint.fix]\nstyl = "plain"\n', "styl"),
    ('[tool.eaglelint.per-file-ignores]\n"*.py" = ["NOPE1"]\n', "per-file-ignores"),
])
def test_unknown_key_or_bad_value_is_exit_2_naming_file_and_key(fork, table, key):
    config = write(fork / "pyproject.toml", table)
    done = run("check", fork / "python")
    assert done.returncode == 2, done.stdout
    assert str(config) in done.stderr and key in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(ConfigError, match=key):
        load_settings(config)


def test_broken_toml_is_exit_2_naming_the_file(fork):
    config = write(fork / "pyproject.toml", "[tool.eaglelint\n")
    done = run("check", fork / "python")
    assert done.returncode == 2 and str(config) in done.stderr and "Traceback" not in done.stderr


def test_readme_configuration_example_is_valid(tmp_path):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    settings = load_settings(write(tmp_path / "pyproject.toml", block))
    assert settings.wrapper_attributes == ("language_model", "llm", "text_model")
    assert settings.per_file_ignores and settings.style == "raise"
