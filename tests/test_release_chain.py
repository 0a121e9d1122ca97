"""The capture chain on real SGLang releases, each case read by hand in the release's source.

Qwen3.5-VL (0.5.11 to 0.5.21): the inherited Qwen3-VL setter writes
`self.model.layers_to_capture`, the Qwen3.5 decoder captures by the per-layer flag
`_is_layer_to_capture`: EGL051 at link d; 0.5.22 calls the decoder's own setter: clean.
Qwen4Exp (0.5.23): the setter marks the layers, but `Qwen4ExpModel.forward` returns
`(hidden_states, hc_hidden_states)` on every non-idle batch and `Qwen4ExpVLModel.forward`
passes on only the tensor: EGL052 at link e. Decoders that collect through per-layer flags
count as collecting.
"""

import ast
import shutil
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from eaglelint.analysis.capture.links import Link
from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.capture_chain import CaptureChainAnalysis
from eaglelint.analysis.sglang.owners import OwnerAnalysis
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

pytestmark = pytest.mark.release

CHAIN_CODES = ("EGL050", "EGL051", "EGL052", "EGL053")


def models(version):
    from fetch_sglang import models_dir

    return models_dir(version)


def chain_findings(version, *files):
    root = models(version)
    paths = [root / f for f in files] if files else [root]
    found = check_files(discover(paths).files, CheckOptions(tuple(select_interfaces(None)))).findings
    return {(f.class_name, f.code, f.wrapped_path.rsplit("/", 1)[-1], f.wrapped_line) for f in found
            if f.code in CHAIN_CODES}


def analysis(version):
    resolver = Resolver(Project())
    return models(version), CaptureChainAnalysis(resolver, OwnerAnalysis(resolver))


@pytest.mark.parametrize("version", ["0.5.11", "0.5.21"])
def test_qwen3_5_vl_inherited_setter_is_reported(version):
    found = {(c, code) for c, code, _, _ in chain_findings(version, "qwen3_5.py")}
    assert found == {("Qwen3_5ForConditionalGeneration", "EGL051"), ("Qwen3_5MoeForConditionalGeneration", "EGL051")}


def test_qwen3_5_vl_writer_and_reader_lines_0_5_21():
    root, chains = analysis("0.5.21")
    chain = chains.chain(ClassEntity(str(root / "qwen3_5.py"), "Qwen3_5ForConditionalGeneration"))
    (broken,) = chain.broken
    # qwen3_vl.py:1777 `self.model.layers_to_capture = [val + 1 for val in layer_ids]` (the engine's call
    # with a list runs that branch); qwen3_5.py:1826
    # `if getattr(layer, "_is_layer_to_capture", False)` in the decoder's forward
    assert (broken.link, broken.writer.cls.path.rsplit("/", 1)[-1], broken.writer.line) == \
        (Link.READ, "qwen3_vl.py", 1777)
    assert (broken.reader.cls.qualname, broken.reader.line) == ("Qwen3_5ForCausalLM", 1826)


def test_qwen3_5_vl_is_clean_at_0_5_22():
    assert chain_findings("0.5.22", "qwen3_5.py") == set()


def test_qwen4_exp_decoder_returns_no_aux_at_0_5_23():
    found = chain_findings("0.5.23", "qwen4_exp.py")
    assert {(c, code) for c, code, _, _ in found} == {("Qwen4ExpForConditionalGeneration", "EGL052")}


@pytest.mark.parametrize(("file", "decoder"), [
    ("minimax_m3.py", "MiniMaxM3Model"),
    ("qwen3_5.py", "Qwen3_5ForCausalLM"),
    ("qwen2_moe.py", "Qwen2MoeModel"),
])
def test_per_layer_flag_decoders_collect(file, decoder):
    root, chains = analysis("0.5.23")
    capture = chains.decoder(ClassEntity(str(root / file), decoder))
    assert capture.collects is True and "_is_layer_to_capture" in capture.flags


def test_qwen4_exp_decoder_does_not_collect_for_the_chain():
    root, chains = analysis("0.5.23")
    capture = chains.decoder(ClassEntity(str(root / "qwen4_exp.py"), "Qwen4ExpVLModel"))
    assert capture.flags == {"_is_layer_to_capture"} and capture.returns_aux is False


def test_whole_0_5_23_tree_reports_only_the_hand_checked_chains():
    assert {(c, code) for c, code, _, _ in chain_findings("0.5.23")} == {("Qwen4ExpForConditionalGeneration", "EGL052")}


# -- MiniCPMV4_6 at 0.5.23: its llm is a decoder body; the fix writes the member as an owner ---

def _method(path, cls, name):
    tree = ast.parse(path.read_text())
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls)
    return next(fn for fn in node.body if isinstance(fn, ast.FunctionDef) and fn.name == name)


def _plain_class(fns):
    body = "".join(textwrap.indent(ast.unparse(fn), "    ") + "\n" for fn in fns)
    namespace = {}
    exec(compile("from __future__ import annotations\nclass Model:\n" + body, "<members>", "exec"), namespace)
    return namespace["Model"]


def _capture_test(path, cls):
    """The decoder's own test of whether a layer is captured, taken from its forward: the
    condition under which it hands a layer its capture target (the aux list)."""
    forward = _method(path, cls, "forward")
    test = next(n.test for n in ast.walk(forward) if isinstance(n, ast.IfExp)
                and isinstance(n.body, ast.Name) and n.body.id == "aux_hidden_states")
    return eval(f"lambda layer: {ast.unparse(test)}")


def _captured(served_cls, holder, layer_ids, layers=40):
    """Runs the served member on a stand-in holding the release's decoder helper; which layers
    the release's own capture test then picks, and the served flag."""
    release = models("0.5.23")
    decoder = _plain_class([_method(release / "qwen3_5.py", "Qwen3_5ForCausalLM", "set_eagle3_layers_to_capture")])()
    decoder.layers = [SimpleNamespace() for _ in range(layers)]
    served = served_cls()
    served.capture_aux_hidden_states = False
    served.pp_group = SimpleNamespace(is_last_rank=True)
    setattr(served, holder, decoder)
    served.set_eagle3_layers_to_capture(layer_ids)
    captures = _capture_test(release / "qwen3_5.py", "Qwen3_5ForCausalLM")
    return served.capture_aux_hidden_states, [i for i, layer in enumerate(decoder.layers) if captures(layer)]


def test_minicpmv4_6_fix_writes_the_owner_member_and_it_captures_as_sglang_owners_do(tmp_path):
    from fetch_sglang import release_root

    target = tmp_path / "sglang" / "srt" / "models"
    shutil.copytree(release_root("0.5.23") / "sglang" / "srt" / "models", target)
    minicpmv = target / "minicpmv.py"
    done = subprocess.run([sys.executable, "-m", "eaglelint", "fix", "--write", "--no-dependents", str(minicpmv)],
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    resolver = Resolver(Project())
    chain = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver)).chain(ClassEntity(str(minicpmv), "MiniCPMV4_6"))
    assert chain.holds is True and chain.decoder.qualname in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM")
    ours = _plain_class([_method(minicpmv, "MiniCPMV4_6", "set_eagle3_layers_to_capture")])
    # SGLang's own served Qwen3.5 text model (qwen3_5_text.py) holds the same decoder as self.model
    theirs = _plain_class([_method(models("0.5.23") / "qwen3_5_text.py", "Qwen3_5ForCausalLM",
                                   "set_eagle3_layers_to_capture")])
    for layer_ids in (None, [1, 19, 36]):
        assert _captured(ours, "llm", layer_ids) == _captured(theirs, "model", layer_ids)
    assert _captured(ours, "llm", None) == (True, [2, 20, 37])
    assert _captured(ours, "llm", [1, 19, 36]) == (True, [2, 20, 37])


def test_minicpmv4_6_bare_delegation_fails_what_the_chain_asks():
    """What the fix wrote before (a bare call of the decoder's helper): None is iterated, and
    the served flag stays False, so the served forward hands the logits processor a tuple."""
    bare = _plain_class(ast.parse(
        "def set_eagle3_layers_to_capture(self, layers_to_capture):\n"
        "    self.llm.set_eagle3_layers_to_capture(layers_to_capture)\n").body)
    with pytest.raises(TypeError):
        _captured(bare, "llm", None)
    assert _captured(bare, "llm", [1, 19, 36]) == (False, [1, 19, 36])


def test_qwen2_unpacked_twice_at_0_5_2():
    """0.5.2 qwen2.py:484 and :488 paste `if self.capture_aux_hidden_states: hidden_states,
    aux_hidden_states = hidden_states` twice: the second takes the hidden-state tensor apart
    mid-request. 0.5.3 removed the second block."""
    found = chain_findings("0.5.2", "qwen2.py")
    assert {(c, code) for c, code, _, _ in found} == {("Qwen2ForCausalLM", "EGL053")}
    assert chain_findings("0.5.3", "qwen2.py") == set()


def test_qwen2_5_vl_drops_aux_at_0_5_5_post3():
    """0.5.5.post3 qwen2_5_vl.py:575 unpacks the aux states, and the logits processor call at
    :579 passes four arguments, without them: the draft gets none."""
    found = chain_findings("0.5.5.post3", "qwen2_5_vl.py")
    assert {(c, code) for c, code, _, _ in found} == {("Qwen2_5_VLForConditionalGeneration", "EGL053")}
