"""`check` and `support` give one decision, on real releases: a row that asks for work has the
finding that does it, a row resting on findings names only ones `check` makes for that class,
and a class `support` calls supported carries no error. One analysis per release serves both
(pipeline/support.py `judged`: the rows, with the findings they were read from).

The classes the two once disagreed on, each read by hand in the release's source:
- 0.5.9 and 0.5.21 JetVLMForConditionalGeneration (jet_vlm.py) holds
  `self.llm = JetNemotronForCausalLM(...)` and runs it for its forward: a wrapper of a whole
  language model, not the owner of the Qwen2Model inside it. That model lacks the members
  itself (EGL041 at jet_nemotron.py), so there is nothing to delegate to yet: not supported. Nor
  will there be: JetNemotron's layers update their recurrent state outside the target-verify
  pass, so no capture member makes EAGLE-3 work on it (not supported either).
- 0.5.9 Qwen3OmniMoeForConditionalGeneration (qwen3_omni_moe.py) holds a Qwen3-VL thinker
  (`self.thinker`, `self.forward = self.thinker.forward`) whose base lacks the members
  (EGL041 at qwen3_vl_moe.py): not supported; once 0.5.11 wrote them into Qwen3-VL, the
  wrapper's delegation (EGL001, 0.5.21) is the fix.
- 0.5.21 qwen3_5_text.py's Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM own lm_head and the
  logits call, and hold `self.model = self.body_cls(...)`, qwen3_5.py's decoder body of the
  same name (layers, no head, capture by per-layer flag), but lack
  set_eagle3_layers_to_capture (upstream wrote it in 0.5.22): the engine's call raises, EGL041.
- 0.5.9 MiniCPMV (minicpmv.py) forwards every unknown attribute to the version model it builds
  (`_SUPPORT_VERSION`, :1317); it has no finding of its own, but each version class holds a
  language model with both members and carries EGL001: a fixable gap whose delegations are
  written in the version classes.
"""

import os
import re

import pytest
from fetch_sglang import models_dir

from eaglelint.checks.delegation import OPTIONAL_CODE, SEVERITY_BY_CALLED_ON
from eaglelint.checks.owner import CODE as OWNER_CODE
from eaglelint.checks.owner import NO_FIX_CODE as OWNER_NO_FIX_CODE
from eaglelint.packs import load_codes, select_interfaces
from eaglelint.pipeline.support import FIXABLE, IMPLEMENTABLE, NOT_SUPPORTED, SUPPORTED, judged

pytestmark = pytest.mark.release

VERSIONS = ("0.5.9", "0.5.21", "0.5.23")
OWNER = {OWNER_CODE, OWNER_NO_FIX_CODE}  # EGL040, EGL041
DELEGATION = {*SEVERITY_BY_CALLED_ON.values(), OPTIONAL_CODE}  # EGL001-EGL003
CAPTURE = "set_eagle3_layers_to_capture"
EMBED_AND_HEAD = "get_embed_and_head"


class Judged:
    """A release's rows and, per class (by file and name), its findings: a gap reported once
    at a base counts for each registered subclass the finding names."""

    def __init__(self, version):
        self.root = models_dir(version)
        self.rows, findings = judged([self.root], select_interfaces(None))
        self.by_class = {}
        for f in findings:
            where = os.path.abspath(f.path)
            self.by_class.setdefault((where, f.class_name), []).append(f)
            for label in f.subclasses:  # "Name" in the same file, "Name (file.py)" in another
                name, _, other = label.partition(" (")
                path = os.path.join(os.path.dirname(where), other[:-1]) if other else where
                self.by_class.setdefault((path, name), []).append(f)

    def findings(self, row):
        return [f for f in self.by_class.get((row.path, row.entry), []) if f.interface in (None, row.pack)]

    def row(self, file, entry, pack="eagle3"):
        path = str(self.root / file)
        found = [r for r in self.rows if r.path == path and r.entry == entry and r.pack == pack]
        assert len(found) == 1, (file, entry)
        return found[0]

    def rests_on_held_owner(self, row):
        """A wrapper whose held owner gets the members from its own EGL040 findings, each of
        which the row names by class, member and file:line, and which check reports there."""
        named = re.findall(r"(\w+)\.(\w+) \(EGL040, ([\w.]+):(\d+)\)", row.detail)
        return bool(named) and all(
            any(f.code == OWNER_CODE and f.class_name == cls and f.method == member and f.line == int(line)
                for f in self.by_class.get((os.path.join(os.path.dirname(row.path), file), cls), []))
            for cls, member, file, line in named)

    def codes(self, file, entry):
        return {(f.code, f.method, f.line) for f in self.by_class.get((str(self.root / file), entry), [])}


@pytest.fixture(scope="module")
def releases():
    """Each release judged once for all the tests of this module."""
    cache = {}

    def get(version):
        if version not in cache:
            cache[version] = Judged(version)
        return cache[version]
    return get


def disagreements(release):
    """Each row that its class's findings contradict, with why."""
    errors = {code for code, entry in load_codes().items() if entry.severity == "error"}
    out = []
    for row in release.rows:
        codes = {f.code for f in release.findings(row)}
        if row.status == IMPLEMENTABLE and not codes & OWNER and not release.rests_on_held_owner(row):
            out.append((row.entry, row.status, "no EGL040/EGL041"))
        if row.status == FIXABLE and not codes & DELEGATION:
            # a dispatcher (MiniCPMV) forwards to the model it builds: the delegations are written
            # there, so each model it may build must carry its own fixable finding
            bare = [c.name for c in row.candidates
                    if not {f.code for f in release.by_class.get((c.path, c.name), [])} & (DELEGATION | OWNER)]
            if not row.candidates or bare:
                out.append((row.entry, row.status, f"no EGL001-EGL003{' on ' + ', '.join(bare) if bare else ''}"))
        if not set(row.codes) <= codes:  # a broken capture chain: its EGL05x among them
            out.append((row.entry, row.status, f"rests on {sorted(set(row.codes) - codes)}, not reported"))
        if row.status == SUPPORTED and codes & errors:
            out.append((row.entry, row.status, f"carries errors {sorted(codes & errors)}"))
    return out


@pytest.mark.parametrize("version", VERSIONS)
def test_every_row_agrees_with_its_findings(releases, version):
    release = releases(version)
    assert disagreements(release) == []
    assert any(r.status in (IMPLEMENTABLE, FIXABLE) for r in release.rows)  # the relations were tried


def test_0_5_9_wrappers_of_a_language_model_lacking_the_members(releases):
    release = releases("0.5.9")
    for file, entry in (("jet_vlm.py", "JetVLMForConditionalGeneration"),
                        ("qwen3_omni_moe.py", "Qwen3OmniMoeForConditionalGeneration")):
        assert release.row(file, entry).status == NOT_SUPPORTED
        assert release.codes(file, entry) == set()
    # what stands in their way is the held model's own gap, reported where it lies
    # JetNemotron's JetBlock reads its Mamba cache itself (jet_nemotron.py:267), outside the backend's
    # target-verify pass: no capture member, the fix's or a person's, makes EAGLE-3 work on it
    jet = release.row("jet_nemotron.py", "JetNemotronForCausalLM")
    assert jet.status == NOT_SUPPORTED and "no member can make EAGLE-3 work" in jet.detail
    assert "jet_nemotron.py:267" in jet.detail
    # and the wrapper's row says so, not that a gap of the held model's is to be filled first
    vlm = release.row("jet_vlm.py", "JetVLMForConditionalGeneration").detail
    assert "no member can make EAGLE-3 work on JetNemotronForCausalLM" in vlm and "jet_nemotron.py:267" in vlm
    assert "gap first" not in vlm
    assert {(m, line) for c, m, line in release.codes("jet_nemotron.py", "JetNemotronForCausalLM")
            if c in OWNER} == {(CAPTURE, 493), (EMBED_AND_HEAD, 493)}
    assert {m for c, m, _ in release.codes("qwen3_vl_moe.py", "Qwen3VLMoeForConditionalGeneration")
            if c in OWNER} == {CAPTURE, EMBED_AND_HEAD}


def test_0_5_21_wrappers_and_the_text_qwen3_5_owners(releases):
    release = releases("0.5.21")
    assert release.row("jet_vlm.py", "JetVLMForConditionalGeneration").status == NOT_SUPPORTED
    assert release.codes("jet_vlm.py", "JetVLMForConditionalGeneration") == set()
    omni = ("qwen3_omni_moe.py", "Qwen3OmniMoeForConditionalGeneration")  # the thinker has them now
    assert release.row(*omni).status == FIXABLE
    assert {(c, m) for c, m, _ in release.codes(*omni)} == {("EGL001", CAPTURE), ("EGL001", EMBED_AND_HEAD)}
    for entry, line in (("Qwen3_5ForCausalLM", 40), ("Qwen3_5MoeForCausalLM", 222)):
        row = release.row("qwen3_5_text.py", entry)
        # read off the decoder: its flags, set by its own set_dflash_layers_to_capture (test_release_fix.py
        # runs the member against 0.5.22's hand-written one)
        assert (row.status, row.codes) == (IMPLEMENTABLE, ("EGL040",))
        assert release.codes("qwen3_5_text.py", entry) == {("EGL040", CAPTURE, line)}
    # a broken capture chain (the inherited Qwen3-VL setter, test_release_chain.py): the row rests on it
    vl = release.row("qwen3_5.py", "Qwen3_5ForConditionalGeneration")
    assert (vl.status, vl.codes) == (NOT_SUPPORTED, ("EGL051",))


def test_0_5_23_text_qwen3_5_owners_have_the_member(releases):
    release = releases("0.5.23")
    for entry in ("Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"):
        assert release.row("qwen3_5_text.py", entry).status == SUPPORTED
        assert release.codes("qwen3_5_text.py", entry) == set()


def test_0_5_23_a_delegation_that_leaves_the_forwards_path_broken_is_not_supported(releases):
    """Sarashina2-Vision lacks both members (EGL001/EGL002 against self.llm), and its own forward
    runs self.llm.model and calls its own logits processor without the aux hidden states
    (sarashina2_vision.py, EGL020-EGL022). The delegations leave that forward as it is, so the
    class is not supported after `eaglelint fix` either: the row says so now and names both."""
    release = releases("0.5.23")
    row = release.row("sarashina2_vision.py", "Sarashina2VisionForCausalLM")
    assert row.status == NOT_SUPPORTED
    assert "eaglelint fix delegates" in row.detail and "EGL022" in row.detail
    codes = {c for c, _, _ in release.codes("sarashina2_vision.py", "Sarashina2VisionForCausalLM")}
    assert {"EGL001", "EGL022"} <= codes


def test_0_5_9_a_delegation_that_leaves_a_member_no_fix_writes_is_not_supported(releases):
    """NemotronH_Nano_VL_V2 lacks get_embed_and_head (EGL001: its language_model, NemotronH,
    has it) and set_eagle3_layers_to_capture, which NemotronHForCausalLM lacks too: 0.5.9's
    NemotronHModel.forward (nemotron_h.py:588) collects no aux hidden states. The delegation
    leaves the capture member missing: not supported, before the fix as after it."""
    release = releases("0.5.9")
    row = release.row("nano_nemotron_vl.py", "NemotronH_Nano_VL_V2")
    assert row.status == NOT_SUPPORTED
    assert "delegate get_embed_and_head" in row.detail and "nemotron_h.py:588" in row.detail
