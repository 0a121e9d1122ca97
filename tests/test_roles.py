"""Roles: a draft is told by what it does (its forward, or that of the model it holds, reads
the target's hidden states off the speculative batch; or it has the member the DFlash worker
hands them to), the name pattern staying one way in. Fixtures in SGLang's shapes, the summary
fact and its cache entry, and real releases, read by hand."""

from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.drafts import is_draft, runs_on_target_hidden
from eaglelint.analysis.sglang.roles import is_draft_name
from eaglelint.analysis.store.cache_codec import decode, encode

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
BEHAVIOUR = MODELS / "draft_by_behaviour.py"


def judged(path: Path, name: str) -> tuple[bool, bool]:
    resolver = Resolver(Project())
    cls = ClassEntity(str(path), name)
    return runs_on_target_hidden(resolver, cls), is_draft(resolver, cls)


@pytest.mark.parametrize("name", ["AssistantForCausalLM", "UnifiedAssistantForCausalLM",
                                  "HeadOverReaderForCausalLM", "BlockAssistantModel"])
def test_a_class_that_runs_on_the_targets_hidden_states_is_a_draft_whatever_its_name(name):
    assert not is_draft_name(name, BEHAVIOUR)
    assert judged(BEHAVIOUR, name) == (True, True)


def test_reading_only_the_batchs_speculative_bookkeeping_makes_no_draft():
    assert judged(BEHAVIOUR, "SpecAwareForCausalLM") == (False, False)
    assert judged(MODELS / "owner_decoder_lm.py", "OwnerDecoderForCausalLM") == (False, False)


def test_a_draft_by_name_is_confirmed_by_what_its_forward_does():
    # owner_draft_mtp.py's forward reads nothing of the target: the name alone says so
    assert judged(MODELS / "owner_draft_mtp.py", "OwnerDecoderForCausalLMMTP") == (False, True)


def test_the_summary_records_the_read_and_the_cache_keeps_it():
    summary = Project().summary(BEHAVIOUR)
    assert decode(encode(summary)) == summary
    classes = summary.classes
    assert classes["AssistantForCausalLM"].methods["forward"].reads_spec_hidden
    assert classes["HeldReaderModel"].methods["forward"].reads_spec_hidden  # through a local `spec_info`
    assert not classes["SpecAwareForCausalLM"].methods["forward"].reads_spec_hidden
    assert not classes["BlockAssistantModel"].methods["project_target_hidden"].reads_spec_hidden


# Registered classes that run on the target's hidden states although their names say nothing
# of it, read by hand in each release: gemma4_mtp.py's forward reads
# forward_batch.spec_info.hidden_states (the speculative hook loads both only as drafts), and
# dflash.py's MuseGlimmerAssistantModel is a DFlashDraftModel alias with project_target_hidden.
UNNAMED_DRAFTS = {
    "0.5.9": set(),
    "0.5.21": {"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM", "MuseGlimmerAssistantModel"},
    "0.5.23": {"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM", "MuseGlimmerAssistantModel"},
}
# Named drafts whose code shows no read of the target's hidden states: 0.5.9's
# MistralLarge3ForCausalLMEagle sets self.model_cls = MistralLarge3Model (the reader), but the
# DeepseekV2ForCausalLM constructor it calls builds DeepseekV2Model and never reads model_cls.
NAME_ONLY = {"0.5.9": {"MistralLarge3ForCausalLMEagle"}, "0.5.21": set(), "0.5.23": set()}


@pytest.mark.release
@pytest.mark.parametrize("version", sorted(UNNAMED_DRAFTS))
def test_release_drafts_by_behaviour_and_by_name(version):
    from fetch_sglang import models_dir

    project = Project()
    resolver = Resolver(project)
    unnamed, name_only = set(), set()
    for path in discover([models_dir(version)]).files:
        mod = project.summary(path)
        for name in mod.entry_classes if mod else ():
            for cls in (e for e in resolver.lookup(mod.path, name) if isinstance(e, ClassEntity)):
                behaves, named = runs_on_target_hidden(resolver, cls), is_draft_name(name, cls.path)
                if behaves and not named:
                    unnamed.add(name)
                if named and not behaves:
                    name_only.add(name)
    assert unnamed == UNNAMED_DRAFTS[version]
    assert name_only == NAME_ONLY[version]
