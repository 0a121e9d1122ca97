"""Link b on its own: the engine calls the member as `model.set_eagle3_layers_to_capture(ids)`.

The oracle fixtures whose member cannot take that call break other links too (a property
member writes nothing, so links c and f break with it); these tests pin the link the
verdict names first, so that each check of link b is guarded by a case only it decides.
"""

import pytest
from conftest import FIXTURES

from eaglelint.analysis.capture.links import Link
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.capture_chain import CaptureChainAnalysis
from eaglelint.analysis.sglang.owners import OwnerAnalysis

MODELS = FIXTURES / "chain_oracle" / "sglang" / "srt" / "models"


@pytest.mark.parametrize(("name", "says"), [
    ("PropertyMemberForCausalLM", "is a property"),
    ("NoArgumentMemberForCausalLM", "takes no layer ids"),
    ("TwoArgumentMemberForCausalLM", "requires 2 arguments"),
])
def test_a_member_the_engine_cannot_call_breaks_link_b(name, says):
    resolver = Resolver(Project())
    chain = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver)).chain(
        ClassEntity(str(MODELS / "member_binding.py"), name))
    assert chain is not None
    first = chain.broken[0]
    assert (first.link, says in first.message) == (Link.CALL, True)


@pytest.mark.parametrize("name", ["BorrowedMemberForCausalLM", "FunctionMemberForCausalLM"])
def test_a_member_bound_as_a_class_attribute_is_followed_as_the_function_it_names(name):
    resolver = Resolver(Project())
    chain = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver)).chain(
        ClassEntity(str(MODELS / "member_binding.py"), name))
    assert chain is not None and chain.holds is True


def test_a_property_that_may_give_a_function_is_unknown_not_broken():
    """The engine calls what the property returns: a bound method takes the ids."""
    resolver = Resolver(Project())
    chain = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver)).chain(
        ClassEntity(str(MODELS / "member_binding.py"), "PropertyGivesMethodForCausalLM"))
    assert chain is not None and (chain.holds, chain.broken) == (None, ())


@pytest.mark.release
def test_none_is_eagle3s_alone_a_dflash_member_that_refuses_none_holds():
    """SGLang's DFlash and DSpark engines always pass a list (spec_aux_hidden_state.py), so
    0.5.23's `LlamaForCausalLM.set_dflash_layers_to_capture`, which raises on None, holds."""
    from fetch_sglang import models_dir

    resolver = Resolver(Project())
    chains = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver))
    llama = ClassEntity(str(models_dir("0.5.23") / "llama.py"), "LlamaForCausalLM")
    assert chains.chain(llama, "set_dflash_layers_to_capture").broken == ()
    assert chains.chain(llama).holds is True
