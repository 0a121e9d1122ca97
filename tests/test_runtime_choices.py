"""Classes chosen at run time, on our fixtures (SGLang's patterns): per-subclass verdicts,
the config-dependent choice judged over the registry's candidates, what `eaglelint fix` writes, the cache round trip."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.store.cache_codec import decode, encode
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
EAGLE3 = {"set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"}


def check(attrs=("language_model",)):
    options = CheckOptions(tuple(select_interfaces(None)), attrs)
    return check_files(discover([FIXTURES / "check"]).files, options).findings


def test_parameter_default_gap_names_only_subclasses_keeping_the_default():
    base = [f for f in check() if f.class_name == "DefaultChoiceWrapper"]
    assert {f.method for f in base} == {"get_embed_and_head"}  # PartialLLMForCausalLM's only hook
    # PositionalChoiceChild / KeywordPlainChild / ExplicitBaseCallChild pass another class up
    assert base[0].subclasses == ("KeepsDefaultChild", "PassesOthersUpChild")


def test_subclass_passing_a_class_up_is_judged_with_that_class():
    wrapped = {f.class_name: f.wrapped_class for f in check() if f.path.endswith("runtime_choice_parameter.py")}
    assert wrapped["PositionalChoiceChild"] == "BaseLLMForCausalLM"
    assert wrapped["ExplicitBaseCallChild"] == "BaseLLMForCausalLM"
    assert "KeywordPlainChild" not in wrapped


def test_abstract_factory_base_gets_no_verdict_and_each_version_its_own():
    found = [f for f in check(("llm",)) if f.path.endswith("runtime_choice_factory.py")]
    by_class: dict[str, set] = {}
    for f in found:
        by_class.setdefault(f.class_name, set()).add((f.method, f.wrapped_class))
    assert "MiniBaseModel" not in by_class and "MiniNotBuilt" not in by_class
    assert by_class["MiniV2"] == {(m, "BaseLLMForCausalLM") for m in EAGLE3}
    assert by_class["MiniV3"] == by_class["MiniV5"] == {("get_embed_and_head", "PartialLLMForCausalLM")}


def test_registry_literal_is_the_entry_class_of_that_name():
    found = [f for f in check() if f.class_name == "RegistryLiteralWrapper"]
    assert {(f.method, f.wrapped_class) for f in found} == {(m, "RegisteredLMForCausalLM") for m in EAGLE3}


def test_config_dependent_choice_is_judged_over_the_registered_text_models():
    found = [f for f in check() if f.class_name.startswith("RegistryConfig")]
    assert {(f.class_name, f.method) for f in found} == {("RegistryConfigWrapper", m) for m in EAGLE3}
    assert all(f.subclasses == () for f in found)  # RegistryConfigProvidesAll has every member itself
    # the fixture tree registers text models that lack some members (PartialLLMForCausalLM's kind):
    # a delegation that raises where the held model lacks the member
    assert not any(f.intent.every_candidate for f in found if f.method != "set_eagle3_layers_to_capture")


def test_config_dependent_choice_without_a_registry_stays_unresolved_and_says_so(tmp_path):
    models = tmp_path / "models"  # no registry.py: no candidate set can be formed
    models.mkdir()
    shutil.copy(MODELS / "runtime_choice_registry.py", models)
    found = [f for f in check_files([models / "runtime_choice_registry.py"],
                                    CheckOptions(tuple(select_interfaces(None)))).findings
             if f.class_name.startswith("RegistryConfig")]
    assert [(f.class_name, f.code) for f in found] == [("RegistryConfigWrapper", "EGL010")]
    assert "has no SGLang model registry" in found[0].sentence


def test_fix_writes_delegations_in_the_subclass_that_chose_the_class(tmp_path):
    tree = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(MODELS, tree)
    target = tree / "runtime_choice_parameter.py"
    run = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--isolated", "--no-cache",
                          str(target)], capture_output=True, text=True)
    assert run.returncode in (0, 1), run.stderr
    classes = {n.name: n for n in ast.parse(target.read_text()).body if isinstance(n, ast.ClassDef)}

    def delegates(cls: str) -> set[str]:
        return {fn.name for fn in classes[cls].body if isinstance(fn, ast.FunctionDef) and any(
            isinstance(c, ast.Call) and ast.unparse(c.func) == f"self.language_model.{fn.name}"
            for c in ast.walk(fn))}

    assert delegates("PositionalChoiceChild") == delegates("ExplicitBaseCallChild") == EAGLE3
    assert delegates("DefaultChoiceWrapper") == {"get_embed_and_head"}
    assert delegates("KeywordPlainChild") == delegates("KeepsDefaultChild") == set()


def test_cache_codec_carries_super_calls_and_abstract_builders():
    for name in ("runtime_choice_parameter.py", "runtime_choice_factory.py"):
        summary = Project().summary(MODELS / name)
        assert decode(encode(summary)) == summary
    child = Project().summary(MODELS / "runtime_choice_parameter.py").classes["PositionalChoiceChild"]
    assert child.methods["__init__"].super_calls
    base = Project().summary(MODELS / "runtime_choice_factory.py").classes["MiniBaseModel"]
    assert base.methods["init_llm"].abstract
    assert Path(MODELS / "registry.py").is_file()


def test_owner_subclass_passing_a_collecting_decoder_gets_the_siblings_members(tmp_path):
    """The subclass's own verdict is fixable: the members its decoder's sibling
    (OwnerDecoderForCausalLM) writes, copied verbatim into the subclass, nothing into the base."""
    shutil.copytree(FIXTURES / "check" / "sglang", tmp_path / "sglang")
    models = tmp_path / "sglang" / "srt" / "models"
    owner = models / "owner_constructor_choice.py"
    before = owner.read_text()
    run = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--isolated", "--no-cache",
                          "--select", "EGL040", str(models)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    sibling = (MODELS / "owner_decoder_lm.py").read_text().splitlines(keepends=True)
    tree = ast.parse("".join(sibling))
    lm = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "OwnerDecoderForCausalLM")
    copied = {fn.name: "".join(sibling[fn.lineno - 1 - len(fn.decorator_list):fn.end_lineno])
              for fn in lm.body if isinstance(fn, ast.FunctionDef)}
    end = "        super().__init__(config, quant_config, prefix, decoder_cls=OwnerDecoderModel)\n"
    expected = before.replace("from torch import nn\n", "from typing import List, Optional\n\nfrom torch import nn\n")
    expected = expected.replace(end, end + "\n" + copied["set_eagle3_layers_to_capture"] + "\n"
                                + copied["get_embed_and_head"])
    assert owner.read_text() == expected
    after = check_files(discover([models]).files, CheckOptions(tuple(select_interfaces(None)))).findings
    assert not [f for f in after if "ChoiceFor" in f.class_name]
