"""The `vllm` pack on a real vLLM release (model code fetched from the registry, cached)."""

import ast
import shutil
from pathlib import Path

import pytest
from fetch_sglang import VLLM_VERSION, vllm_models_dir

from eaglelint.analysis.discover import discover
from eaglelint.analysis.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix.plan import plan_fixes, write_fix
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release
MARKER_GAPS = {
    ("dots_ocr.py", "DotsOCRForCausalLM"),
    ("moss_audio.py", "MossAudioModel"),
    ("paddleocr_vl.py", "PaddleOCRVLForConditionalGeneration"),
}


def check(root: Path, project: Project | None = None):
    options = CheckOptions(tuple(select_interfaces(["vllm"])))
    return check_files(discover([root]).files, options, project).findings


def by_code(findings, code):
    return {(Path(f.path).name, f.class_name) for f in findings if f.code == code}


def test_vllm_0_33_wrappers_missing_supports_eagle3():
    assert VLLM_VERSION == "0.33.0"
    findings = check(vllm_models_dir())
    assert by_code(findings, "EGL030") == MARKER_GAPS
    # Granite 4 Vision's decoder overrides forward without collecting aux hidden states
    assert by_code(findings, "EGL031") == {("granite4_vision.py", "Granite4VisionForConditionalGeneration")}
    assert not by_code(findings, "EGL999")


def test_vllm_0_33_fix_adds_the_marker_and_the_result_checks_clean(tmp_path):
    root = tmp_path / "vllm" / "model_executor" / "models"
    shutil.copytree(vllm_models_dir(), root)
    project = Project()
    plan = plan_fixes(check(root, project), project)
    assert {p.path.name for p in plan.files} == {name for name, _ in MARKER_GAPS}
    for file_fix in plan.files:
        write_fix(file_fix)
        tree = ast.parse(file_fix.path.read_text())
        cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and (file_fix.path.name, n.name)
                   in MARKER_GAPS)
        assert ast.unparse(cls.bases[-1]) == "SupportsEagle3"
    assert not by_code(check(root), "EGL030")
