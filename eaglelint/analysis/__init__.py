"""Reading Python without running it: summaries, resolution across modules, and what the
engines' own calls build.

The analysis is built in rooms whose imports run one way, lowest first: syntax/ (plain
Python syntax), store/ (the summary cache), python/ (Python's semantics over the project),
capture/ (what both engines share), then sglang/ and vllm/ (each engine's knowledge; never
each other). tests/test_architecture.py `ROOMS` keeps them so.

This module is where the rooms are wired: what a higher room knows reaches a lower one
only as what is installed here. The engines whose calls the analysis reads are named here,
and only here: each provides a call hook (python/calls.py), SGLang's for its model
registry's lookup (sglang/served.py), vLLM's for its model loaders (vllm/vllm_registry.py).
A third engine, or an engine's new idiom, is one more hook in this list; the Python room
names no engine. The read through which the engine hands a draft model its target's hidden
states (SGLang's speculative batch) is given to the summary as data, and how a summary is
laid out as cache data (python/summary_codec.py) to the store below it.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from .python.calls import DRAFT_READ, HOOKS, CallHook
from .store.cache_codec import SUMMARY_LAYOUT

if TYPE_CHECKING:
    from .python.method_facts import HeldRead


def engine_hooks() -> tuple[CallHook, ...]:
    """The engines' hooks, in the order they are asked. Imported when a run first reads a
    call, not by one that reads nothing (a warm run)."""
    from .sglang.served import REGISTRY_CALLS
    from .vllm.vllm_registry import LOADER_CALLS

    return REGISTRY_CALLS, LOADER_CALLS


HOOKS.install(engine_hooks)


def draft_read() -> HeldRead:
    """The read through which the engine hands a draft model its target's hidden states
    (SGLang's speculative batch), recorded per function while a file is summarised."""
    from .sglang.speculative import SPEC_HIDDEN_READ

    return SPEC_HIDDEN_READ


DRAFT_READ.install(draft_read)


def summary_layout() -> ModuleType:
    """How a summary is laid out as cache data: the Python room's, which the store sits below.
    Imported when a summary is first encoded or decoded, not by a warm run."""
    from .python import summary_codec

    return summary_codec


SUMMARY_LAYOUT.install(summary_layout)
