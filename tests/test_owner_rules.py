"""Owner classes (EGL040/EGL041): our fixtures, the rule's own documented examples, and
SGLang's Qwen3-VL, which 0.5.10.post1 ships without the members and 0.5.11 fixed by hand.

Python is the oracle for the fix: the members written into 0.5.10.post1 and the ones
SGLang wrote in 0.5.11 are executed against the same plain-Python stand-ins and must
leave the same state and return the same objects.
"""

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.presence import has_member
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.checks.aux_path import AuxChecker
from eaglelint.packs import load_codes
from eaglelint.pipeline.lint import SettingsFinder, lint

MEMBERS = ("set_eagle3_layers_to_capture", "get_embed_and_head")
OWNER = "OwnerVLForConditionalGeneration"


def eaglelint(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd)


def check(path: Path) -> list:
    return lint([path], SettingsFinder(isolated=True), Project()).findings


def codes_of(findings, cls: str) -> set[tuple[str, str]]:
    return {(f.code, f.method) for f in findings if f.class_name == cls}


def aux_problems(path: Path, cls: str) -> list:
    """EGL020-EGL023 as AuxChecker judges the class, its decoder held as self.model."""
    resolver = Resolver(Project())
    owner = ClassEntity(os.path.abspath(path), cls)
    return AuxChecker(resolver).problems(owner, "model", [], has_member)


@pytest.mark.parametrize("code", ["EGL040", "EGL041"])
def test_documented_bad_example_is_flagged_and_good_is_clean(code, tmp_path):
    rule = load_codes()[code]
    for kind, expected in (("bad", {(code, m) for m in MEMBERS}), ("good", set())):
        models = tmp_path / kind / "models"
        models.mkdir(parents=True)
        (models / "example.py").write_text(getattr(rule, kind))
        assert {(f.code, f.method) for f in check(models)} == expected, kind


def test_inherited_gap_names_the_registered_subclass():
    findings = check(FIXTURES / "check")
    found = [f for f in findings if f.class_name == OWNER]
    assert {f.subclasses for f in found} == {("OwnerVLMoeForConditionalGeneration",)}
    assert all(f.fixable and f.provider_class == "OwnerDecoderForCausalLM" for f in found)
    lonely = [f for f in findings if f.class_name == "LonelyForCausalLM"]
    assert lonely and not any(f.fixable for f in lonely)


def test_a_subclass_is_not_told_it_will_inherit_a_member_its_base_does_not_get(tmp_path):
    """LonelyForCausalLM's capture member cannot be written (its decoder numbers captures across
    repeated loops): a registered subclass with a forward of its own inherits nothing from the fix,
    so the only finding is the base's EGL041, naming it; a subclass of a base the fix does give the
    member (OwnForwardSubclassForCausalLM in test_owner_contract.py) gets one of its own."""
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    source = (FIXTURES / "check" / "sglang/srt/models/EGL041_owner_no_sibling.py").read_text()
    source = source.replace("EntryClass = LonelyForCausalLM", textwrap.dedent("""\
        class LonelyOwnForward(LonelyForCausalLM):
            def forward(self, input_ids, positions, forward_batch):
                return self.logits_processor(input_ids, self.model(input_ids, positions, forward_batch),
                                             self.lm_head, forward_batch)


        EntryClass = [LonelyForCausalLM, LonelyOwnForward]"""))
    (models / "lonely.py").write_text(source)
    found = check(models)
    assert not [f for f in found if f.class_name == "LonelyOwnForward"]
    capture = [f for f in found if f.method == MEMBERS[0]]
    assert [(f.class_name, f.code, f.subclasses) for f in capture] == [
        ("LonelyForCausalLM", "EGL041", ("LonelyOwnForward",))]


def test_fix_writes_the_siblings_members_and_the_aux_path(tmp_path):
    shutil.copytree(FIXTURES / "check" / "sglang", tmp_path / "sglang")
    models = tmp_path / "sglang" / "srt" / "models"
    owner = models / "EGL040_owner_capture_decoder.py"
    first = eaglelint("fix", "--write", "--select", "EGL040", models)
    assert first.returncode == 0, first.stderr
    assert owner.read_text() == (FIXTURES / "owner_fix" / "EGL040_owner_capture_decoder.py.expected").read_text()
    assert not codes_of(check(models), OWNER)
    assert aux_problems(owner, OWNER) == []  # EGL020-EGL023 hold after the fix
    second = eaglelint("fix", "--write", "--select", "EGL040", models)
    assert "Added 0 methods" in second.stdout
    assert (models / "EGL041_owner_no_sibling.py").read_bytes() == (
        FIXTURES / "check/sglang/srt/models/EGL041_owner_no_sibling.py").read_bytes()


def test_aux_rules_would_flag_the_owner_without_the_forward_change(tmp_path):
    """The forward edits are what make EGL020-EGL023 hold, not an accident of the checker."""
    expected = (FIXTURES / "owner_fix" / "EGL040_owner_capture_decoder.py.expected").read_text()
    only_members = expected.replace("        self.capture_aux_hidden_states = False\n", "")
    path = tmp_path / "models" / "owner.py"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "check/sglang/srt/models/owner_decoder_lm.py", path.parent)
    path.write_text(only_members.replace("from sglang.srt.models.owner_decoder_lm", "from .owner_decoder_lm"))
    assert {p.code for p in aux_problems(path, OWNER)} == {"EGL022"}


# -- SGLang's Qwen3-VL: 0.5.10.post1 reported, fixed like 0.5.11 by hand -------------------

def methods_of(path: Path, cls: str, names) -> type:
    """The class's methods `names`, and nothing else, as a plain-Python class."""
    tree = ast.parse(path.read_text())
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
    body = "".join(textwrap.indent(ast.unparse(fn), "    ") + "\n" for fn in node.body
                   if isinstance(fn, ast.FunctionDef) and fn.name in names)
    calls = []
    namespace = {
        "torch": SimpleNamespace(no_grad=lambda: (lambda f: f)),
        "general_mm_embed_routine": lambda **kw: ("hidden", ["aux"]),
    }
    exec(compile("from __future__ import annotations\nclass Model:\n" + body, str(path), "exec"), namespace)
    namespace["Model"].calls = calls
    return namespace["Model"]


def standin(cls: type, last_rank: bool = True):
    model = cls()
    model.pp_group = SimpleNamespace(is_last_rank=last_rank)
    model.config = SimpleNamespace(num_hidden_layers=36)
    model.model = SimpleNamespace(layers_to_capture=[], embed_tokens=SimpleNamespace(weight=object()))
    model.lm_head = SimpleNamespace(weight=object())
    model.capture_aux_hidden_states = False
    model.is_mrope_enabled = False
    model.use_deepstack = False
    model.logits_processor = lambda *args, **kw: model.calls.append((args, kw)) or "logits"
    return model


def run_members(cls: type, layer_ids):
    model = standin(cls)
    model.set_eagle3_layers_to_capture(layer_ids)
    embed, head = model.get_embed_and_head()
    batch = SimpleNamespace(forward_mode=SimpleNamespace(is_decode=lambda: True),
                            contains_image_inputs=lambda: False)
    out = model.forward("ids", "pos", batch)
    args, kw = model.calls[-1]
    return (model.capture_aux_hidden_states, model.model.layers_to_capture,
            embed is model.model.embed_tokens.weight, head is model.lm_head.weight, out,
            tuple(a if a not in (model.lm_head, batch) else type(a).__name__ for a in args), kw)


@pytest.mark.release
def test_qwen3_vl_0_5_10_post1_fixed_behaves_as_0_5_11_by_hand(tmp_path):
    from fetch_sglang import release_root

    models = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(release_root("0.5.10.post1") / "sglang" / "srt" / "models", models)
    qwen3_vl = models / "qwen3_vl.py"
    cls = "Qwen3VLForConditionalGeneration"
    assert codes_of(check(qwen3_vl), cls) == {("EGL040", m) for m in MEMBERS}
    assert eaglelint("fix", "--write", "--no-dependents", qwen3_vl).returncode == 0
    assert not codes_of(check(qwen3_vl), cls)
    # the members written open a gap in the unchanged qwen3_omni_moe.py, whose registered
    # Qwen3OmniMoeForConditionalGeneration holds a Qwen3VLForConditionalGeneration subclass
    # as self.thinker (line 505) and defines neither: reported as a dependent
    after = eaglelint("check", "--output-format", "json", qwen3_vl)
    assert {(Path(f["path"]).name, f["method"]) for f in json.loads(after.stdout)} == {
        ("qwen3_omni_moe.py", m) for m in MEMBERS}
    assert aux_problems(qwen3_vl, cls) == []
    upstream = release_root("0.5.11") / "sglang" / "srt" / "models" / "qwen3_vl.py"
    names = (*MEMBERS, "forward")
    ours, theirs = methods_of(qwen3_vl, cls, names), methods_of(upstream, cls, names)
    for layer_ids in (None, [1, 17, 33]):
        assert run_members(ours, layer_ids) == run_members(theirs, layer_ids)
    assert run_members(ours, None)[:2] == (True, [2, 18, 33])
    assert run_members(ours, [1])[5][-1] == ["aux"]  # the logits processor gets the aux hidden states


@pytest.mark.release
def test_qwen3_vl_0_5_11_is_clean():
    from fetch_sglang import release_root

    qwen3_vl = release_root("0.5.11") / "sglang" / "srt" / "models" / "qwen3_vl.py"
    findings = check(qwen3_vl)
    assert not [f for f in findings if f.code in ("EGL040", "EGL041")]


def test_the_owner_bytes_test_takes_a_class_as_registered_only_by_its_whole_name():
    """`may_hold_owner`: a class that is neither a base of another nor named after EntryClass
    cannot be an owner with a gap; `ToyForCausalLM` is not named by `ToyForCausalLMV2`."""
    from eaglelint.analysis.sglang.class_index import ClassIndex
    from eaglelint.checks.owner import may_hold_owner

    body = (b"class ToyModel(nn.Module):\n    def forward(self, x):\n        aux = []\n"
            b"        return x, aux\n\n\n"
            b"class ToyForCausalLM(nn.Module):\n    def __init__(self, config):\n"
            b"        self.model = ToyModel(config)\n        self.lm_head = None\n"
            b"        self.logits_processor = None\n\n\n")
    for listed, expected in ((b"ToyForCausalLMV2", False), (b"MyToyForCausalLM", False), (b"ToyForCausalLM", True)):
        raw = body + b"EntryClass = [" + listed + b"]\n"
        path = Path("/t/toy.py")
        assert may_hold_owner(path, ClassIndex({path: raw})) is expected, listed


@pytest.mark.parametrize("forward", [
    b"        return self._run(x)\n\n    def _run(self, x):\n        aux = []\n        return x, aux\n",
    b"        aux = (\n            Packer.for_batch(x, 2)\n        )\n        return x, aux\n",
], ids=["method", "classmethod"])
def test_the_owner_bytes_test_keeps_a_decoder_that_collects_through_a_method_or_a_classmethod(forward):
    """`may_hold_owner` may drop only a decoder that cannot collect: one whose forward returns
    what a method of its own returns, or collects into `Packer.for_batch(...)`, may."""
    from eaglelint.analysis.sglang.class_index import ClassIndex
    from eaglelint.checks.owner import may_hold_owner

    raw = (b"class ToyModel(nn.Module):\n    def forward(self, x):\n" + forward + b"\n\n"
           b"class ToyForCausalLM(nn.Module):\n    def __init__(self, config):\n"
           b"        self.model = ToyModel(config)\n        self.lm_head = None\n"
           b"        self.logits_processor = None\n\n\nEntryClass = [ToyForCausalLM]\n")
    path = Path("/t/toy.py")
    assert may_hold_owner(path, ClassIndex({path: raw}))
