"""Reading Python without running it: summaries, resolution across modules, and what the
engines' own calls build.

The engines whose calls the analysis reads are named here, and only here: each provides a
call hook (calls.py), SGLang's for its model registry's lookup (served.py), vLLM's for its
model loaders (vllm_registry.py). A third engine, or an engine's new idiom, is one more
hook in this list; the core (exprs.py, resolve.py and what they import) names no engine,
and tests/test_architecture.py keeps it so.
"""

from .python.calls import HOOKS, CallHook
from .python.method_facts import DRAFT_READ, HeldRead


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
