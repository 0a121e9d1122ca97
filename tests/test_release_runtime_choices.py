"""Classes chosen at run time, on real SGLang releases; each expectation derived from the
release's source, as the comments say."""

import ast
import re
from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.analysis.python.choices import held_classes
from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release


def held(version: str, file: str, cls: str, attr: str) -> set[str]:
    resolver = Resolver(Project())
    classes, reasons = held_classes(resolver, ClassEntity(str(models_dir(version) / file), cls), attr)
    assert not reasons
    return {c.qualname for c in classes}


def check(paths, attrs=("language_model",)):
    options = CheckOptions(tuple(select_interfaces(["all"])), attrs)
    return check_files(discover(paths).files, options).findings


def test_0_5_23_qwen3_vl_family_each_holds_what_its_constructor_passes():
    # qwen3_vl.py: Qwen3VLForConditionalGeneration.__init__(..., language_model_cls=Qwen3LLMModel)
    # then self.model = language_model_cls(...); the loader passes only config/quant_config.
    assert held("0.5.23", "qwen3_vl.py", "Qwen3VLForConditionalGeneration", "model") == {"Qwen3LLMModel"}
    # qwen3_5.py: __init__(..., language_model_cls=Qwen3_5ForCausalLM), then
    # super().__init__(config, quant_config, prefix, language_model_cls): positional.
    assert held("0.5.23", "qwen3_5.py", "Qwen3_5ForConditionalGeneration", "model") == {"Qwen3_5ForCausalLM"}
    assert held("0.5.23", "qwen3_5.py", "Qwen3_5MoeForConditionalGeneration", "model") == {"Qwen3_5MoeForCausalLM"}
    # qwen3_vl_moe.py: language_model_cls=Qwen3MoeLLMModel, passed up the same way
    assert held("0.5.23", "qwen3_vl_moe.py", "Qwen3VLMoeForConditionalGeneration", "model") == {"Qwen3MoeLLMModel"}
    # cosmos3.py: super().__init__(config=config, quant_config=quant_config, prefix=prefix): the default
    assert held("0.5.23", "cosmos3.py", "Cosmos3ForConditionalGeneration", "model") == {"Qwen3LLMModel"}
    # qwen4_exp.py: language_model_cls=Qwen4ExpVLModel, passed up positionally
    assert held("0.5.23", "qwen4_exp.py", "Qwen4ExpForConditionalGeneration", "model") == {"Qwen4ExpVLModel"}


def test_0_5_10_post1_qwen3_vl_owner_gap_not_pinned_on_subclasses_choosing_another_decoder():
    # Qwen3_5*, Qwen3VLMoe and InternS1Pro (interns1pro.py: language_model_cls=InternS1ProTextModel)
    # each pass another class up: the base's EGL040 is not theirs.
    found = [f for f in check([models_dir("0.5.10.post1")], ("language_model",))
             if f.class_name == "Qwen3VLForConditionalGeneration"]
    assert {f.method for f in found} == {"set_eagle3_layers_to_capture", "get_embed_and_head"}
    assert all(f.subclasses == () for f in found)


@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_minicpmv_abstract_base_has_no_verdict_and_each_version_its_own_language_model(version):
    # minicpmv.py: MiniCPMBaseModel.init_llm only raises NotImplementedError; the versions return
    # Qwen2ForCausalLM (2_6), LlamaForCausalLM (4_0), Qwen3ForCausalLM (4_5).
    found = check([models_dir(version)], ("llm",))
    mine = [f for f in found if Path(f.path).name == "minicpmv.py"]
    assert not [f for f in mine if f.class_name == "MiniCPMBaseModel"]
    hooks = {f.class_name: f.wrapped_class for f in mine if f.method == "set_eagle3_layers_to_capture"}
    assert hooks["MiniCPMV2_6"] == "Qwen2ForCausalLM"
    assert hooks["MiniCPMV4_0"] == "LlamaForCausalLM"
    assert hooks["MiniCPMV4_5"] == "Qwen3ForCausalLM"


LLAVA_GAPS = {
    # llava.py 0.5.9: LlavaBaseForCausalLM and LlavaForConditionalGeneration define none of the three
    "0.5.9": {("EGL001", "set_eagle3_layers_to_capture"), ("EGL001", "get_embed_and_head"),
              ("EGL002", "set_embed_and_head")},
    # llava.py 0.5.23: LlavaBaseForCausalLM defines get_embed_and_head (461) and set_embed_and_head (467)
    "0.5.23": {("EGL001", "set_eagle3_layers_to_capture")},
}


def text_models(root: Path) -> dict[str, set[str]]:
    """Read with ast, apart from eaglelint (bases followed by name over the whole tree): each
    class a top-level module's EntryClass lists that is not a draft by name, has a head along its
    bases (`self.lm_head` / `self.logits_processor` assigned, or `get_embed_and_head` defined) and
    assigns no `self.language_model`; with the methods its bases define."""
    classes: dict[str, tuple[list[str], set[str], set[str]]] = {}
    for path in root.rglob("*.py"):
        for node in ast.parse(path.read_bytes()).body:
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, (
                    [ast.unparse(b).split("[")[0].rsplit(".", 1)[-1] for b in node.bases],
                    {f.name for f in node.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)},
                    {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute) and isinstance(a.ctx, ast.Store)
                     and isinstance(a.value, ast.Name) and a.value.id == "self"}))
    listed = set()
    for path in root.glob("*.py"):
        for node in ast.parse(path.read_bytes()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in node.targets):
                listed |= {e.id for e in (node.value.elts if isinstance(node.value, ast.List) else [node.value])}

    def chain(name: str, seen: tuple = ()) -> list[str]:
        return [name, *(c for b in classes[name][0] if b in classes and b not in seen and b != name
                        for c in chain(b, (*seen, name)))]

    out = {}
    for name in listed - {n for n in listed if re.search("NextN|MTP|Eagle|DFlash|DSpark|Draft", n)}:
        methods = set().union(*(classes[c][1] for c in chain(name)))
        assigned = set().union(*(classes[c][2] for c in chain(name)))
        if ({"lm_head", "logits_processor"} & assigned or "get_embed_and_head" in methods) \
                and "language_model" not in assigned:
            out[name] = methods
    return out


@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_llava_conditional_generation_lacks_members_whatever_the_checkpoint_names(version):
    # llava.py _get_sgl_model_cls: config.__class__.__name__ -> transformers' AutoModelForCausalLM
    # mapping -> ModelRegistry.resolve_model_cls(arch): any registered text model may be built, and
    # the class lacks the members whichever it is: a gap over every candidate, fixed with a
    # delegation that raises where the held model lacks the member.
    root = models_dir(version)
    found = [f for f in check([root / "llava.py"], ()) if f.class_name == "LlavaForConditionalGeneration"
             and f.method in LLAVA_GAPS[version] | {m for _, m in LLAVA_GAPS["0.5.9"]}]
    assert {(f.code, f.method) for f in found} == LLAVA_GAPS[version]
    candidates = text_models(root)
    for f in found:
        counted = tuple(map(int, re.search(r"which (\d+) of the (\d+) classes", f.message).groups()))
        assert counted == (sum(f.method in m for m in candidates.values()), len(candidates))
        assert not f.intent.every_candidate and f.fix is not None
        assert any("raise AttributeError" in line for edit in f.fix.edits for line in edit.lines)
        source = Path(f.wrapped_path).read_text().splitlines()
        assert source[f.wrapped_line - 1].strip().startswith(f"def {f.method}(")


def test_0_5_10_post1_qwen3_vl_moe_judged_with_its_own_decoder_and_0_5_11_clean():
    # 0.5.10.post1 qwen3_vl_moe.py: Qwen3VLMoeForConditionalGeneration passes
    # language_model_cls=Qwen3MoeLLMModel up; that decoder's forward collects through
    # layers_to_capture, and neither qwen3_vl.py nor qwen3_vl_moe.py defines the two members
    # (SGLang issue #17935, Qwen3-VL-30B-A3B). 0.5.11 added them to Qwen3VLForConditionalGeneration.
    found = [f for f in check([models_dir("0.5.10.post1")])
             if f.class_name == "Qwen3VLMoeForConditionalGeneration"]
    assert {(f.method, f.wrapped_class) for f in found} == {
        ("set_eagle3_layers_to_capture", "Qwen3MoeLLMModel"), ("get_embed_and_head", "Qwen3MoeLLMModel")}
    assert all(f.entry_class for f in found)
    assert not [f for f in check([models_dir("0.5.11")]) if Path(f.path).name == "qwen3_vl_moe.py"]


def test_0_5_23_candidates_read_from_class_text_agree_with_parsed_classes():
    """served.py sketches a registered class it has not parsed from its text; parsing every
    registered class first must give the same candidates and the same providers."""
    from eaglelint.analysis.sglang.served import provides, served, text_models

    path = str(models_dir("0.5.23") / "llava.py")
    lazy, parsed = Resolver(Project()), Resolver(Project())
    for cls in served(parsed, path).classes:
        parsed.mro(cls)  # the class and its bases parsed
    assert text_models(lazy, path) == text_models(parsed, path)
    for member in ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head"):
        assert [c for c in text_models(lazy, path) if provides(lazy, c, member)] == \
            [c for c in text_models(parsed, path) if provides(parsed, c, member)]
