"""scripts/runtime/gpu_eagle3_kimi_k25.py: its logic on CPU here, the engine run where a GPU and SGLang exist."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from runtime_support import (
    EAGLE3,
    KIMI,
    RUNTIME_SCRIPTS,
    gpu_verdict,
    run_probe,
    strip_methods,
    trim_kernel_wheel,
    venv_python,
)
from runtime_support import gpu_script as gpu

SCRIPT = RUNTIME_SCRIPTS / "gpu_eagle3_kimi_k25.py"


def methods(path: Path, cls: str = KIMI[1]) -> dict[str, set[str]]:
    """method -> the attribute calls in its body (e.g. language_model.get_embed_and_head)."""
    node = next(n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {f.name: {ast.unparse(c.func).removeprefix("self.") for c in ast.walk(f)
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)}
            for f in node.body if isinstance(f, ast.FunctionDef)}


def test_strip_methods_removes_exactly_the_named_methods_and_their_decorators(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("class K:\n    def keep(self):\n        return 1\n\n"
                    "    @staticmethod\n    def get_embed_and_head():\n        return 2\n\n"
                    "    def set_embed_and_head(self, e, h):\n        pass\n\n\nX = K\n")
    assert strip_methods(path, "K") == ["get_embed_and_head", "set_embed_and_head"]
    assert path.read_text() == "class K:\n    def keep(self):\n        return 1\n\n\nX = K\n"
    assert strip_methods(path, "K") == []
    with pytest.raises(ValueError):
        strip_methods(path, "Missing")


def test_trim_kernel_wheel_keeps_the_sm90_ops_and_a_matching_record(tmp_path):
    names = ["sgl_kernel/__init__.py", "sgl_kernel/flash_ops.abi3.so", "sgl_kernel/sm90/common_ops.abi3.so",
             "sgl_kernel/sm100/common_ops.abi3.so", "sgl_kernel/infllm_ops.cpython-310-x86_64-linux-gnu.so",
             "sgl_kernel/flashmla_ops.abi3.so", "sgl_kernel/flash_attn.py", "triton_kernels/a.py"]
    wheel = tmp_path / "in" / "sglang_kernel-0.4.5-cp310-abi3-manylinux2014_x86_64.whl"
    wheel.parent.mkdir()
    record = "sglang_kernel-0.4.5.dist-info/RECORD"
    with zipfile.ZipFile(wheel, "w") as zf:
        for name in names:
            zf.writestr(name, b"x")
        zf.writestr(record, "".join(f"{n},sha256=x,1\n" for n in names) + f"{record},,\n")
    with zipfile.ZipFile(trim_kernel_wheel.trim(wheel, tmp_path / "out")) as zf:
        kept = ["sgl_kernel/__init__.py", "sgl_kernel/sm90/common_ops.abi3.so", "sgl_kernel/flash_attn.py",
                "triton_kernels/a.py"]
        assert zf.namelist() == [*kept, record]
        assert [line.split(",")[0] for line in zf.read(record).decode().splitlines()] == [*kept, record]


@pytest.fixture(scope="module")
def prepared_0_5_23(tmp_path_factory) -> dict:
    """The script's CPU half on 0.5.23, whose kimi_k25.py delegates already: strip, then fix."""
    work = tmp_path_factory.mktemp("gpu-script") / "work"
    done = subprocess.run([str(venv_python("0.5.23")), str(SCRIPT), str(work), "--prepare-only",
                           "--eaglelint-python", sys.executable], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((work / "verdict.json").read_text())


@pytest.mark.runtime
@pytest.mark.slow
def test_gpu_script_brings_back_0_5_9s_gap_and_fixes_it(prepared_0_5_23):
    summary = prepared_0_5_23
    assert summary["stripped"] == sorted(EAGLE3)
    assert summary["fix_exit"] == 0
    unfixed = methods(Path(summary["unfixed_tree"]) / "sglang" / KIMI[0])
    fixed = methods(Path(summary["fixed_tree"]) / "sglang" / KIMI[0])
    assert not set(EAGLE3) & set(unfixed)
    for name in EAGLE3:
        assert f"language_model.{name}" in fixed[name]
    assert set(fixed) - set(EAGLE3) == set(unfixed)
    # the broken copy: the fixed file with set_eagle3_layers_to_capture doing nothing, the rest as fixed
    broken_path = Path(summary["broken_tree"]) / "sglang" / KIMI[0]
    broken = methods(broken_path)
    assert broken[EAGLE3[0]] == set() and {k: v for k, v in broken.items() if k != EAGLE3[0]} == {
        k: v for k, v in fixed.items() if k != EAGLE3[0]}
    assert "return None  # broken on purpose" in broken_path.read_text()


@pytest.mark.runtime
@pytest.mark.slow
def test_gpu_script_checkpoints_and_trees_build_in_sglang_on_cpu(prepared_0_5_23, tmp_path):
    summary = prepared_0_5_23
    target, draft = Path(summary["target"]), Path(summary["draft"])
    assert json.loads((target / "config.json").read_text())["text_config"]["num_hidden_layers"] == gpu.TARGET_LAYERS
    eagle = json.loads((draft / "config.json").read_text())["eagle_config"]
    assert eagle["eagle_aux_hidden_state_layer_ids"] == gpu_verdict.AUX_LAYER_IDS
    unfixed_kimi = Path(summary["unfixed_tree"]) / "sglang" / KIMI[0]
    report = run_probe(venv_python("0.5.23"), Path(summary["fixed_tree"]), (target, draft), unfixed_kimi,
                       tmp_path / "report.json")
    assert report["unloaded_params"] == {"target": [], "draft": ["model.embed_tokens.weight"]}
    assert all(e and e.startswith("AttributeError") for e in report["unfixed_methods"].values())
    assert report["fixed_methods"] == dict.fromkeys(EAGLE3)
    assert report["eagle3"]["after_set_layers"] == {"capture_aux_hidden_states": True, "layers_to_capture": [2]}
    assert report["eagle3"]["get_embed_and_head"]["embed_is_wrapped"] is True


def _gpu_and_sglang() -> str | None:
    """Why the engine test cannot run in this interpreter, or None when it can."""
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("sglang") is None:
        return "needs torch and sglang installed in the interpreter running pytest (see docs/runtime.md, GPU run)"
    import torch

    return None if torch.cuda.is_available() else "needs a CUDA GPU"


@pytest.mark.gpu
@pytest.mark.skipif(_gpu_and_sglang() is not None, reason=str(_gpu_and_sglang()))
def test_engine_eagle3_fails_unfixed_decodes_fixed_and_catches_the_broken_fix_on_gpu(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "work")], capture_output=True, text=True,
                          timeout=600)
    summary = json.loads((tmp_path / "work" / "verdict.json").read_text())
    assert summary["problems"] == [], done.stdout[-4000:]
    assert done.returncode == 0
