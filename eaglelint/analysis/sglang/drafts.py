"""Drafts by what they do: which registered classes SGLang only ever loads as draft models.

Why: the engine calls target-side members (`set_eagle3_layers_to_capture`) on the served
target only; a draft class lacking them is no gap. A draft runs on what the target hands
it: its forward (or that of a model it holds) reads the target's hidden states off the
speculative batch (`forward_batch.spec_info.hidden_states`: every EAGLE, MTP and NextN
draft, and Gemma 4's assistant, whose name says nothing of it), or it has the member
through which the DFlash/DSpark workers hand it the target's hidden states
(`draft_model.project_target_hidden(target_hidden)`). A class named or remapped as a draft
(roles.py) is one too: that is the way in the bytes-level pre-filters use.

The read is recorded while a method is summarised (`FunctionInfo.reads_spec_hidden`, only in
modules whose text names spec_info), so telling a draft parses nothing more.
"""

from __future__ import annotations

from ..python.choices import held_classes
from ..python.entities import ClassEntity
from ..python.resolve import Resolver
from ..syntax.sources import SourceError
from .roles import is_draft_name
from .speculative import SPEC_HIDDEN_BYTES

# members the engine's DFlash/DSpark workers call on the draft model with the target's hidden
# states (0.5.23 speculative/dflash_worker_v2.py: `self.draft_model.project_target_hidden(target_hidden)`;
# speculative/dspark_components: `draft_model.write_target_hidden_kv(...)`); no target class defines them
TARGET_HIDDEN_MEMBERS = ("project_target_hidden", "write_target_hidden_kv")
_HELD_DEPTH = 3  # MiMoMTP: self.model, its MTP layers, the layer that reads the batch


def is_draft(resolver: Resolver, cls: ClassEntity) -> bool:
    """A class the engine loads only as a draft model: named or remapped as one (roles.py), or
    running on the target's hidden states (runs_on_target_hidden), whatever its name."""
    return is_draft_name(cls.qualname.rsplit(".", 1)[-1], cls.path) or runs_on_target_hidden(resolver, cls)


def runs_on_target_hidden(resolver: Resolver, cls: ClassEntity) -> bool:
    """The forward the engine runs on cls reads the speculative batch's hidden states, or that
    of a model cls holds does (down to _HELD_DEPTH objects), or cls has a member the engine
    hands the target's hidden states to (TARGET_HIDDEN_MEMBERS). Memoised per resolver."""
    memo: dict[ClassEntity, bool] = resolver.memos.setdefault("drafts.target_hidden", {})
    if cls not in memo:
        memo[cls] = any(resolver.find_member(cls, m) is not None for m in TARGET_HIDDEN_MEMBERS) or \
            _speculative(resolver, cls) and _reads_spec_hidden(resolver, cls, _HELD_DEPTH, set())
    return memo[cls]


def _speculative(resolver: Resolver, cls: ClassEntity) -> bool:
    """A module of cls's MRO has the text of a read of spec_info.hidden_states: where a draft's
    forward, or the class of what it holds, is written. Elsewhere nothing is resolved to learn it."""
    searched: dict[str, bool] = resolver.memos.setdefault("drafts.spec_text", {})  # per module, searched once
    for c in resolver.mro(cls):
        if c.path not in searched:
            try:
                searched[c.path] = SPEC_HIDDEN_BYTES.search(resolver.project.raw(c.path)) is not None
            except SourceError:
                searched[c.path] = False
        if searched[c.path]:
            return True
    return False


def _reads_spec_hidden(resolver: Resolver, cls: ClassEntity, depth: int, seen: set[ClassEntity]) -> bool:
    """cls's forward, or the forward of a class an attribute of it holds, reads the batch's
    spec_info.hidden_states. Only held classes whose own modules name spec_info are followed:
    the others' forwards cannot read it, and what they hold is not searched."""
    seen.add(cls)
    forward = resolver.find_member(cls, "forward")
    if forward is not None and forward.function is not None and forward.function.reads_spec_hidden:
        return True
    if depth == 0:
        return False
    attrs = dict.fromkeys(a for c in resolver.mro(cls) for a in resolver.info(c).self_assigns)
    return any(held not in seen and _speculative(resolver, held) and _reads_spec_hidden(resolver, held, depth - 1, seen)
               for attr in attrs for held in held_classes(resolver, cls, attr)[0])
