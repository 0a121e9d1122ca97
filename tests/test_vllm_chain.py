"""vLLM's capture chain (analysis/vllm/vllm_chain.py) on our fixtures, with Python as the oracle.

The fixtures under fixtures/check/vllm_chain are plain Python in vLLM's patterns: the
protocol's default setter and the decoder mixin run as vLLM 0.33.0 runs them. Each served
class is executed as the engine drives it (gpu_model_runner: `supports_eagle3`, the default
layers, `set_aux_hidden_state_layers`, then `hidden_states, aux_hidden_states = model(...)`);
a class works when that unpacks and the aux list is not empty. The check must report a
chain finding exactly for the classes that do not work.
"""

import importlib
import sys
import types
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

ROOT = FIXTURES / "check" / "vllm_chain"
MODELS = ROOT / "vllm" / "model_executor" / "models"
CHAIN_CODES = {"EGL050", "EGL051", "EGL052"}


@pytest.fixture(scope="module")
def loaded():
    """The fixture package imported with a stand-in torch (nn.Module: a call runs forward)."""
    torch = types.ModuleType("torch")
    torch.nn = types.SimpleNamespace(Module=type("Module", (), {"__call__": lambda s, *a, **k: s.forward(*a, **k)}))
    saved = {k: sys.modules.get(k) for k in ("torch",)}
    sys.modules["torch"] = torch
    sys.path.insert(0, str(ROOT))
    try:
        modules = {p.stem: importlib.import_module(f"vllm.model_executor.models.{p.stem}")
                   for p in sorted(MODELS.glob("*.py"))}
    finally:
        sys.path.remove(str(ROOT))
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
        for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
            del sys.modules[name]
    return modules


def works(cls, marker) -> bool:
    """The engine's steps on one instance (gpu_model_runner._setup_eagle3_aux_hidden_state_outputs, then a step)."""
    model = cls(vllm_config=None)
    if not isinstance(model, marker):
        return False
    try:
        layers = model.get_eagle3_default_aux_hidden_state_layers()
        model.set_aux_hidden_state_layers(layers)
        hidden_states, aux_hidden_states = model(1.0, None)
    except (AssertionError, AttributeError, TypeError, ValueError):
        return False
    return bool(aux_hidden_states)


def served(modules) -> dict[str, type]:
    marker = modules["interfaces"].SupportsEagle3
    return {name: obj for mod in modules.values() for name, obj in vars(mod).items()
            if isinstance(obj, type) and obj.__module__ == mod.__name__ and obj is not marker
            and marker in obj.__mro__ and "vllm_config" in obj.__init__.__code__.co_varnames}


def test_chain_findings_are_exactly_the_classes_that_fail_when_run(loaded):
    marker = loaded["interfaces"].SupportsEagle3
    classes = served(loaded)
    failing = {name for name, cls in classes.items() if not works(cls, marker)}
    found = check_files(discover([ROOT]).files, CheckOptions(tuple(select_interfaces(["vllm"])))).findings
    flagged = {f.class_name for f in found if f.code in CHAIN_CODES}
    assert len(classes) >= 14 and len(failing) >= 7
    assert flagged == failing


def test_each_broken_link_has_its_code(loaded):
    found = check_files(discover([ROOT]).files, CheckOptions(tuple(select_interfaces(["vllm"])))).findings
    by_class = {f.class_name: (f.code, Path(f.wrapped_path).name, f.wrapped_line) for f in found}
    assert by_class["OtherTextForConditionalGeneration"][0] == "EGL050"  # the default's assert
    assert by_class["DelegatesToNothingForConditionalGeneration"][0] == "EGL050"  # a member no class has
    assert by_class["OverridingForCausalLM"][0] == "EGL051"  # written, never read
    assert by_class["FirstItemForCausalLM"][0] == "EGL052"  # collected, dropped on the way up
    # the writer is named with its file and line: the protocol's default assert, the mixin's write
    assert by_class["OtherTextForConditionalGeneration"][1:] == ("interfaces.py", 58)
    assert by_class["OverridingForCausalLM"][1:] == ("interfaces.py", 11)


def test_the_vllm_chain_runs_only_with_the_vllm_pack():
    found = check_files(discover([ROOT]).files, CheckOptions(tuple(select_interfaces(None)))).findings
    assert not [f for f in found if f.code in CHAIN_CODES]
