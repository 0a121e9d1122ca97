"""Wrappers found by what they hold (held.py): the attribute's name does not matter, what
the class it holds is does; `--wrapper-attribute` / `wrapper-attributes` restrict."""

import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.held import HeldIndex, holds_language_model
from eaglelint.checks.delegation import OPTIONAL_CODE, SEVERITY_BY_CALLED_ON
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
HELD_LLM = MODELS / "held_llm.py"
DELEGATION = {*SEVERITY_BY_CALLED_ON.values(), OPTIONAL_CODE}  # EGL001-EGL003
EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")


def classes_reported(wrapper_attrs=(), files=None):
    options = CheckOptions(tuple(select_interfaces(None)), wrapper_attrs)
    found = check_files(files or discover([MODELS]).files, options).findings
    return {(Path(f.path).name, f.class_name, f.wrapper_attribute) for f in found if f.code in DELEGATION}


def test_default_finds_llm_holders_and_restriction_to_language_model_drops_them():
    default = classes_reported()
    assert ("held_llm.py", "NVILAStyleForConditionalGeneration", "llm") in default
    assert ("held_builder.py", "MiniCPMOStyle", "llm") in default
    assert ("held_causal_lm_as_model.py", "OCRStyleForCausalLM", "model") in default
    # an abstract factory in the base: each version that overrides it is found, once
    # (V5 inherits V3's factory and is named in V3's finding)
    assert {cls for name, cls, _ in default if name == "runtime_choice_factory.py"} == {"MiniV2", "MiniV3"}
    restricted = classes_reported(("language_model",))
    assert {attr for _, _, attr in restricted} == {"language_model"}
    assert ("wrapper_plain_assign.py", "PlainWrapperForConditionalGeneration", "language_model") in restricted


def test_restriction_to_llm_keeps_only_llm_holders():
    only_llm = classes_reported(("llm",))
    assert {attr for _, _, attr in only_llm} == {"llm"}
    assert {cls for name, cls, _ in only_llm if name.startswith("held_")} == {
        "NVILAStyleForConditionalGeneration", "MiniCPMOStyle"}


def test_a_file_checked_alone_still_knows_the_held_class_from_its_tree():
    """pre-commit passes only the changed file: base_llm.py is read from the models folder."""
    alone = classes_reported(files=[HELD_LLM])
    assert {cls for _, cls, _ in alone} == {"NVILAStyleForConditionalGeneration"}


def test_index_names_providers_their_subclasses_and_builders_not_decoders():
    raws = {p: p.read_bytes() for p in discover([MODELS]).files}
    index = HeldIndex(raws, EAGLE3, EAGLE3[2:])
    assert {b"BaseLLMForCausalLM", b"DerivedLLMForCausalLM", b"PartialLLMForCausalLM"} <= index.providers
    assert b"PlainLLMForCausalLM" not in index.providers
    assert b"HeadlessDecoderModel" not in index.providers  # defines the setter, but has no head
    assert index.attrs(HELD_LLM, HELD_LLM.read_bytes()) == ("llm",)
    builder = MODELS / "held_builder.py"
    assert index.attrs(builder, builder.read_bytes()) == ("llm",)  # through init_llm's body
    assert index.attrs(MODELS / "ok_not_wrapper.py", (MODELS / "ok_not_wrapper.py").read_bytes()) == ()


def test_cli_wrapper_attribute_restricts_discovery(tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "eaglelint", "check", "--no-cache", *args, str(HELD_LLM)],
                              capture_output=True, text=True)
    assert run().returncode == 1
    assert run("--wrapper-attribute", "language_model").returncode == 0
    config = tmp_path / "eaglelint.toml"
    config.write_text('wrapper-attributes = ["language_model"]\n')
    assert run("--config", str(config)).returncode == 0


def test_a_held_decoder_is_no_language_model_a_held_causal_lm_is():
    """The exact test behind the bytes index: a head of its own, not the setter alone."""
    project = Project()
    resolver = Resolver(project)

    def holds(name, cls, attr):
        mod = project.summary(MODELS / name)
        return holds_language_model(resolver, ClassEntity(mod.path, cls), attr, EAGLE3)
    assert not holds("held_decoder_owner.py", "HeadlessDecoderForCausalLM", "model")
    assert holds("held_causal_lm_as_model.py", "OCRStyleForCausalLM", "model")
    assert holds("held_thinker.py", "OmniMoeStyleForConditionalGeneration", "thinker")
    assert not holds("ok_not_wrapper.py", "EmbeddingModel", "model")  # provides none of the members


def test_a_builder_reaches_the_language_model_through_factory_functions_two_deep():
    """`self.llm = self.build()`, whose body calls a top-level factory that calls another that
    builds the language model: held (two levels of the file's functions are followed). A
    function of that name nested in a class, not at the top, is no factory."""
    model = (b"class ToyForCausalLM(nn.Module):\n"
             b"    def __init__(self):\n        self.lm_head = None\n"
             b"    def set_eagle3_layers_to_capture(self, layers):\n        pass\n\n")
    holder = (b"import torch\n\ndef make_llm(config):\n    return _inner(config)\n\n"
              b"def _inner(config):\n    return ToyForCausalLM(config)\n\n"
              b"class Holder(nn.Module):\n"
              b"    def __init__(self, config):\n        self.llm = self.build(config)\n"
              b"    def build(self, config):\n        return make_llm(config)\n")
    nested = holder.replace(b"def make_llm(config):", b"class Other:\n    def make_llm(config):")
    raws = {Path("/t/toy.py"): model, Path("/t/holder.py"): holder, Path("/t/nested.py"): nested}
    index = HeldIndex(raws, EAGLE3, EAGLE3[2:])
    assert index.attrs(Path("/t/holder.py"), holder) == ("llm",)
    assert index.attrs(Path("/t/nested.py"), nested) == ()
