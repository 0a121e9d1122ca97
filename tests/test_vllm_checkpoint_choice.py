"""vLLM loaders whose architecture only the checkpoint's config names: every registered
text model is a candidate (fixtures/check/vllm_checkpoint_choice, plain Python). Without
SupportsEagle3 the wrapper is refused whatever the checkpoint names; after `fix --write`
it runs EAGLE-3 on every candidate that supports it, with that model's own layers, and
fails loudly, naming the class, on one that does not."""

import importlib
import shutil
import sys
from types import SimpleNamespace

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import Resolver
from eaglelint.analysis.vllm.vllm_registry import registry_for, text_models
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

TREE = FIXTURES / "check" / "vllm_checkpoint_choice"
MODELS = TREE / "vllm" / "model_executor" / "models"
WRAPPERS = ("ChoiceVL", "ChoiceLlm", "LiteralOrCheckpoint")
# Read from the fixture: the layers the engine must end up setting for each text model.
# Llama's decoder has 12 layers, Phi3's 20: the protocol's default (2, n // 2, n - 3);
# DeepForCausalLM picks (1, 3, 5) itself and sets them on its own decoder.
LAYERS = {"LlamaForCausalLM": (2, 6, 9), "Phi3ForCausalLM": (2, 10, 17), "DeepForCausalLM": (1, 3, 5)}
NOT_SUPPORTED = "GemmaForCausalLM"  # a registered text model without SupportsEagle3


def check(root):
    return check_files(discover([root]).files, CheckOptions(tuple(select_interfaces(["vllm"])))).findings


def test_the_candidates_are_the_registered_text_models():
    """Not: a class without compute_logits, a pooling-only one, a multimodal one, a draft
    by its table or by the draft model config it reads, nor a wrapper."""
    project = Project()
    registry = registry_for(project, str(MODELS / "wrapper.py"))
    assert registry is not None
    found = {c.qualname for c in text_models(Resolver(project), registry)}
    assert found == {*LAYERS, NOT_SUPPORTED}


def test_every_checkpoint_chosen_wrapper_without_the_marker_is_a_fixable_gap():
    found = {f.class_name: f for f in check(TREE)}
    assert {c: f.code for c, f in found.items()} == dict.fromkeys(WRAPPERS, "EGL030")
    for f in found.values():
        assert "any of 4 registered text models, 3 of which list it" in f.message
        assert f.fix_refusal is None


@pytest.fixture
def load(monkeypatch):
    def go(root):
        monkeypatch.syspath_prepend(str(root))
        for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
            monkeypatch.delitem(sys.modules, name)
        return (importlib.import_module("vllm.model_executor.models.interfaces"),
                importlib.import_module("vllm.model_executor.models.wrapper"))
    yield go
    for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
        sys.modules.pop(name, None)


def config(architecture: str):
    text = SimpleNamespace(architectures=[architecture])
    return SimpleNamespace(model_config=SimpleNamespace(hf_config=SimpleNamespace(model_type="x_vl", text_config=text)))


def engine_setup(model, interfaces) -> None:
    """vllm/v1/worker/gpu_model_runner.py, _setup_eagle3_aux_hidden_state_outputs."""
    if not interfaces.supports_eagle3(model):
        raise RuntimeError("Model does not support EAGLE3 interface but aux_hidden_state_outputs was requested")
    model.set_aux_hidden_state_layers(model.get_eagle3_default_aux_hidden_state_layers())


def held(model):
    return getattr(model, "language_model", None) or model.llm


@pytest.fixture(scope="module")
def fixed_tree(tmp_path_factory):
    """The fixture tree after `fix --write`: checked again, nothing is left."""
    root = tmp_path_factory.mktemp("fixed") / "tree"
    shutil.copytree(TREE, root)
    project = Project()
    found = check_files(discover([root]).files, CheckOptions(tuple(select_interfaces(["vllm"]))), project)
    plan = fixmod.plan_fixes(found.findings, project, roots=[root])
    assert not plan.left
    for file_fix in plan.files:
        fixmod.write_fix(file_fix)
    assert not check(root)
    return root


@pytest.fixture
def fixed(fixed_tree, load):
    return load(fixed_tree)


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("architecture", sorted(LAYERS))
def test_unfixed_wrapper_is_refused_whatever_the_checkpoint_names(load, wrapper, architecture):
    interfaces, wrappers = load(TREE)
    with pytest.raises(RuntimeError, match="does not support EAGLE3"):
        engine_setup(getattr(wrappers, wrapper)(vllm_config=config(architecture)), interfaces)


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("architecture", sorted(LAYERS))
def test_fixed_wrapper_sets_the_chosen_models_own_layers(fixed, wrapper, architecture):
    interfaces, wrappers = fixed
    model = getattr(wrappers, wrapper)(vllm_config=config(architecture))
    assert type(held(model)).__name__ == architecture
    engine_setup(model, interfaces)
    assert tuple(held(model).model.aux_hidden_state_layers) == LAYERS[architecture]
    output = model.forward("x", None)
    assert isinstance(output, tuple) and len(output[1]) == 3  # the aux hidden states reach the engine


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_fixed_wrapper_names_the_class_held_where_it_cannot_run_eagle3(fixed, wrapper):
    interfaces, wrappers = fixed
    model = getattr(wrappers, wrapper)(vllm_config=config(NOT_SUPPORTED))
    with pytest.raises(AttributeError, match=f"holds {NOT_SUPPORTED}, which has no"):
        engine_setup(model, interfaces)


@pytest.mark.parametrize("wrapper", ["ChoiceVL", "ChoiceLlm"])
def test_the_marker_alone_would_fail_where_the_fix_forwards(load, wrapper):
    """DeepForCausalLM's decoder is no EagleModelMixin, and ChoiceLlm's defaults cannot
    reach self.llm: the protocol's defaults alone assert, so the forwarding is needed."""
    interfaces, wrappers = load(TREE)
    marked = type(wrapper, (getattr(wrappers, wrapper), interfaces.SupportsEagle3), {})
    with pytest.raises(AssertionError):
        engine_setup(marked(vllm_config=config("DeepForCausalLM")), interfaces)


def test_no_candidate_set_without_a_registered_text_model():
    """fixtures/check/vllm_registry registers no class with compute_logits: the checkpoint's
    choice stays unresolved (EGL010), and says why."""
    found = {f.class_name: f for f in check(FIXTURES / "check" / "vllm_registry")}
    assert found["CheckpointWrapper"].code == "EGL010"
    assert "no registered text model" in found["CheckpointWrapper"].sentence
