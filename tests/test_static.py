"""Static means static: eaglelint never imports or executes the code it scans.

Every scanned file here would, if run, write a marker file and then raise (and the
packages' `__init__.py` too, and the files Python or its tools run on their own:
`conftest.py`, `setup.py`, `sitecustomize.py`, an engine module). `check`, `fix
--write` and `interfaces` must analyse them, the fix must land, and no marker may appear.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from eaglelint import cli

PACKAGE = "eaglelint_static_probe"  # a name no real module has, to look for in sys.modules


def side_effect(marker: Path) -> str:
    return (f"import pathlib\npathlib.Path({str(marker)!r}).write_text('executed')\n"
            "raise SystemExit('this module must never be imported')\n\n")


def make_tree(root: Path, package: str = PACKAGE) -> tuple[Path, list[Path]]:
    models = root / package / "srt" / "models"
    models.mkdir(parents=True)
    markers = [root / f"ran_{name}" for name in ("init", "srt_init", "lm", "wrapper")]
    (root / package / "__init__.py").write_text(side_effect(markers[0]))
    (root / package / "srt" / "__init__.py").write_text(side_effect(markers[1]))
    (models / "lm.py").write_text(side_effect(markers[2]) + (
        "class TextModelForCausalLM:\n"
        "    def get_embed_and_head(self):\n        return self.embed_tokens, self.lm_head\n"))
    (models / "wrapper.py").write_text(side_effect(markers[3]) + (
        f"from {package}.srt.models.lm import TextModelForCausalLM\n\n\n"
        "class Wrapper:\n    def __init__(self, config):\n"
        "        self.language_model = TextModelForCausalLM(config)\n\n\nEntryClass = Wrapper\n"))
    runner = root / package / "srt" / "model_executor"
    runner.mkdir()
    extra = {"conftest": root / "conftest.py", "setup": root / "setup.py", "sitecustomize": root / "sitecustomize.py",
             "models_conftest": models / "conftest.py", "models_sitecustomize": models / "sitecustomize.py",
             "engine": runner / "model_runner.py"}
    for name, path in extra.items():
        markers.append(root / f"ran_{name}")
        path.write_text(side_effect(markers[-1]) + "class ModelRunner:\n    def run(self):\n"
                        "        return self.model.get_embed_and_head()\n")
    return models, markers


def eaglelint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_check_and_fix_never_run_the_scanned_code(tmp_path):
    models, markers = make_tree(tmp_path)
    done = eaglelint("check", "--output-format", "json", tmp_path, cwd=tmp_path)
    assert [m.name for m in markers if m.exists()] == []
    rows = json.loads(done.stdout)
    assert [(r["class"], r["method"], Path(r["wrapped_path"]).name) for r in rows] == [
        ("Wrapper", "get_embed_and_head", "lm.py")]
    fixed = eaglelint("fix", "--write", tmp_path, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "return self.language_model.get_embed_and_head()" in (models / "wrapper.py").read_text()
    assert [m.name for m in markers if m.exists()] == []


def test_interfaces_never_runs_the_engine_it_scans(tmp_path):
    _, markers = make_tree(tmp_path, "sglang")
    for cwd, args in ((tmp_path, ()), (tmp_path / "sglang", (tmp_path,))):  # found in the checkout, and named
        done = eaglelint("interfaces", "--output-format", "json", *args, cwd=cwd)
        assert [m.name for m in markers if m.exists()] == []
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
        assert "get_embed_and_head" in {row["name"] for row in json.loads(done.stdout)["names"]}


def test_support_never_runs_the_models_it_judges(tmp_path):
    """The matrix judges every EntryClass entry with check's own analysis: nothing imported."""
    models, markers = make_tree(tmp_path, "sglang")
    for cwd, args in ((tmp_path, ()), (tmp_path / "elsewhere", (models,))):  # found in the checkout, and named
        cwd.mkdir(exist_ok=True)
        done = eaglelint("support", "--output-format", "json", *args, cwd=cwd)
        assert [m.name for m in markers if m.exists()] == []
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        rows = json.loads(done.stdout)
        # judged, not run: the delegation of get_embed_and_head leaves set_eagle3_layers_to_capture,
        # which its TextModelForCausalLM lacks too
        assert [(r["class"], r["status"]) for r in rows] == [("Wrapper", "not supported")]
        assert "delegate get_embed_and_head" in rows[0]["detail"]


def test_default_models_folder_is_found_without_importing_the_package(tmp_path):
    """With no PATH, ./sglang is located (importlib.util.find_spec), not imported."""
    models, markers = make_tree(tmp_path, "sglang")
    done = eaglelint("check", "--output-format", "json", cwd=tmp_path)
    assert [Path(r["path"]).name for r in json.loads(done.stdout)] == ["wrapper.py"]
    fixed = eaglelint("fix", "--write", cwd=tmp_path)
    assert fixed.returncode == 0 and "return self.language_model.get_embed_and_head()" in (
        models / "wrapper.py").read_text()
    assert [m.name for m in markers if m.exists()] == []


def test_in_process_run_leaves_no_scanned_module_in_sys_modules(tmp_path, monkeypatch, capsys):
    _, markers = make_tree(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # importable, if anything tried
    monkeypatch.setattr(sys, "argv", ["eaglelint", "check", "--output-format", "json", str(tmp_path)])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 1
    assert len(json.loads(capsys.readouterr().out)) == 1
    assert not [name for name in sys.modules if name.startswith(PACKAGE)]
    assert [m.name for m in markers if m.exists()] == []
