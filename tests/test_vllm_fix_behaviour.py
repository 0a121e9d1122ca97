"""The vLLM marker fix, executed: after `fix --write`, each wrapper passes vLLM's
`supports_eagle3()` and the engine's two calls (gpu_model_runner: default layers, then
the setter) land on the language model's decoder, with the layers the language model
itself would pick. And where the fix forwards members, the marker alone fails: the
forwarding is needed, not decoration. Plain Python (fixtures/fix/vllm_marker_delegates
runs without torch), with the protocol's defaults copied from vLLM 0.33.0."""

import importlib
import shutil
import sys

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

CASE = FIXTURES / "fix" / "vllm_marker_delegates"
NAMES = ("interfaces", "lm", "wrapper")
# What the engine must end up setting, from each language model's own answer:
# DeepForCausalLM picks (1, 3, 5) itself; TextModel has 12 layers, and the protocol's
# default is (2, n // 2, n - 3) = (2, 6, 9).
EXPECTED = {"DeepWrapper": (1, 3, 5), "LlmHolder": (2, 6, 9), "MarkedLlmWrapper": (2, 6, 9)}


@pytest.fixture(autouse=True)
def fresh_modules():
    yield
    for name in NAMES:
        sys.modules.pop(name, None)


def load(directory, monkeypatch):
    monkeypatch.syspath_prepend(str(directory))
    for name in NAMES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    return [importlib.import_module(n) for n in NAMES]


def engine_setup(model, interfaces) -> None:
    """vllm/v1/worker/gpu_model_runner.py, _setup_eagle3_aux_hidden_state_outputs."""
    if not interfaces.supports_eagle3(model):
        raise RuntimeError("Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested")
    model.set_aux_hidden_state_layers(model.get_eagle3_default_aux_hidden_state_layers())


def decoder(model):
    held = getattr(model, "language_model", None) or model.llm
    return held.model


@pytest.fixture
def fixed(tmp_path, monkeypatch):
    work = tmp_path / "case"
    shutil.copytree(CASE, work)
    project = Project()
    found = check_files(sorted(work.glob("*.py")), CheckOptions(tuple(select_interfaces(["vllm"]))), project)
    plan = fixmod.plan_fixes(found.findings, project, roots=[work])
    assert not plan.left
    for file_fix in plan.files:
        fixmod.write_fix(file_fix)
    return load(work, monkeypatch)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixed_wrapper_sets_the_language_models_own_layers_on_its_decoder(fixed, name):
    interfaces, _, wrapper = fixed
    model = getattr(wrapper, name)(vllm_config=None)
    engine_setup(model, interfaces)
    assert tuple(decoder(model).aux_hidden_state_layers) == EXPECTED[name]


@pytest.mark.parametrize(("config", "layers"), [("text", (2, 6, 9)), ("deep", (1, 3, 5))])
def test_fixed_wrapper_works_whichever_class_the_config_picks(fixed, config, layers):
    """ChoiceWrapper holds TextForCausalLM or DeepForCausalLM: the fix forwards what any
    candidate needs, not only the first one found."""
    interfaces, _, wrapper = fixed
    model = wrapper.ChoiceWrapper(vllm_config=config)
    engine_setup(model, interfaces)
    assert tuple(decoder(model).aux_hidden_state_layers) == layers


@pytest.mark.parametrize("name", ["DeepWrapper", "LlmHolder"])
def test_the_marker_alone_would_fail_where_the_fix_forwards(tmp_path, monkeypatch, name):
    shutil.copytree(CASE, tmp_path / "case")
    interfaces, _, wrapper = load(tmp_path / "case", monkeypatch)
    marked = type(name, (getattr(wrapper, name), interfaces.SupportsEagle3), {})
    model = marked(vllm_config=None)
    try:
        engine_setup(model, interfaces)
    except (AssertionError, AttributeError):
        return  # the protocol's default asserts, or finds no layers: a crash at start-up
    assert tuple(decoder(model).aux_hidden_state_layers) != EXPECTED[name]  # or the wrong layers


def test_unfixed_wrappers_are_refused(tmp_path, monkeypatch):
    shutil.copytree(CASE, tmp_path / "case")
    interfaces, _, wrapper = load(tmp_path / "case", monkeypatch)
    for name in EXPECTED:
        with pytest.raises(RuntimeError, match="does not support EAGLE3"):
            engine_setup(getattr(wrapper, name)(vllm_config=None), interfaces)
