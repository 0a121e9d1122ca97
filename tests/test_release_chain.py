"""The capture chain on real SGLang releases, each case read by hand in the release's source.

Qwen3.5-VL (0.5.11 to 0.5.21): the inherited Qwen3-VL setter writes
`self.model.layers_to_capture`, the Qwen3.5 decoder captures by the per-layer flag
`_is_layer_to_capture`: EGL051 at link d; 0.5.22 calls the decoder's own setter: clean.
Qwen4Exp (0.5.23): the setter marks the layers, but `Qwen4ExpModel.forward` returns
`(hidden_states, hc_hidden_states)` on every non-idle batch and `Qwen4ExpVLModel.forward`
passes on only the tensor: EGL052 at link e. Decoders that collect through per-layer flags
count as collecting.
"""

import pytest

from eaglelint.analysis.capture_chain import CaptureChainAnalysis
from eaglelint.analysis.discover import discover
from eaglelint.analysis.owners import OwnerAnalysis
from eaglelint.analysis.project import Project
from eaglelint.analysis.resolve import ClassEntity, Resolver
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
    # qwen3_vl.py:1771 `self.model.layers_to_capture = [...]`; qwen3_5.py:1782 `def forward` of the decoder
    assert (broken.link, broken.writer.cls.path.rsplit("/", 1)[-1], broken.writer.line) == ("d", "qwen3_vl.py", 1771)
    assert (broken.reader.cls.qualname, broken.reader.line) == ("Qwen3_5ForCausalLM", 1782)


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
