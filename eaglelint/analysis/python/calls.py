"""Calls an engine gives a meaning of its own, read by the engine's hook, not by the core.

Why hooks: what some calls build is decided by an engine's tables, not by the code
called (SGLang's `ModelRegistry.resolve_model_cls("Arch")` returns the class a module's
`EntryClass` lists; vLLM's `init_vllm_registered_model(vllm_config, architectures=[...])`
builds the class its registry names). The core (exprs.py, resolve.py) reads Python
alone; each engine's layer provides a `CallHook` for the calls it knows, as mypy's
`Plugin.get_function_hook` gives a plugin the calls of the names it claims. A hook
works at two moments:

- reading (exprs.py, while a file is summarised): a call of one of its `names` (the
  called name, or the attribute called) may become the Refs the hook makes of it,
  keeping what the engine decides by (its arguments); None: a plain call.
- evaluating (resolve.py): a call Ref that carries a name, and a Ref of a kind the
  core does not read, go to the hooks in order; the first answer that is not None
  stands. None from every hook: a named call is evaluated as a plain call of its
  callee, another Ref is unknown.

The hooks of a run are `HOOKS`, filled once, when first asked for, from what the
package installs (analysis/__init__.py names the engines, and is the only place that
does): summaries are kept in the cache under eaglelint's own code, so every run of
one version reads calls with the same hooks. An engine gives a read a meaning too: the one
through which it hands a draft model its target's hidden states (SGLang's
`forward_batch.spec_info.hidden_states`) is `DRAFT_READ`, installed the same way, which the
summary asks while it reads a file.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # what a hook is handed; the core modules, only as types
    import ast

    from ..syntax.refs import Ref
    from ..syntax.scope import Scope
    from .entities import ClassEntity, Entity
    from .method_facts import HeldRead
    from .resolve import Resolver


class CallReader(Protocol):
    """How a hook reads a call's parts (exprs.py): within the bounds of the expression
    being read, one level below the call."""

    @property
    def scope(self) -> Scope | None:
        """The function's locals, where the call is inside one."""
        ...

    def refs(self, node: ast.expr, literal_strings: bool = False) -> list[Ref]:
        """The Refs of a part of the call; `literal_strings`: a string constant in it is kept
        whole (a `str` Ref), where otherwise it is a `const`."""
        ...


class CallHook(Protocol):
    @property
    def names(self) -> Collection[str]:
        """The called names (`f(...)`) or attributes (`x.f(...)`) whose calls the hook reads."""
        ...

    def read(self, call: ast.Call, name: str, reader: CallReader) -> list[Ref] | None:
        """The Refs a call of `name` stands for, or None: not one the hook reads."""
        ...

    def evaluate(self, resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None,
                 depth: int) -> list[Entity] | None:
        """What a Ref the hook made denotes, or None: not one of its Refs, or one it leaves
        to the core."""
        ...


class CallHooks:
    """The hooks of a run, by the names they read; made from their source when first asked for."""

    def __init__(self) -> None:
        self._source: Callable[[], Iterable[CallHook]] = tuple
        self._hooks: tuple[CallHook, ...] | None = None
        self._by_name: dict[str, tuple[CallHook, ...]] = {}

    def install(self, source: Callable[[], Iterable[CallHook]]) -> None:
        """The hooks from now on: what `source` returns, in order, when first asked for (an
        engine's module is imported then, not by a run that reads nothing)."""
        self._source, self._hooks, self._by_name = source, None, {}

    @property
    def hooks(self) -> tuple[CallHook, ...]:
        return self._hooks if self._hooks is not None else self._load()

    def reading(self, name: str) -> tuple[CallHook, ...]:
        """The hooks that read calls of `name` (none for most names)."""
        if self._hooks is None:
            self._load()
        return self._by_name.get(name, ())

    def _load(self) -> tuple[CallHook, ...]:
        hooks = tuple(self._source())
        by_name: dict[str, tuple[CallHook, ...]] = {}
        for hook in hooks:
            for name in hook.names:
                by_name[name] = (*by_name.get(name, ()), hook)
        self._hooks, self._by_name = hooks, by_name
        return hooks

    def evaluate(self, resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None,
                 depth: int) -> list[Entity] | None:
        for hook in self.hooks:
            found = hook.evaluate(resolver, ref, path, owner, depth)
            if found is not None:
                return found
        return None


HOOKS = CallHooks()


class DraftRead:
    """The read through which the engine hands a draft model its target's hidden states
    (method_facts.py `HeldRead`), from the source installed (analysis/__init__.py names it,
    as it names the engines' call hooks), asked for when a module is first summarised; None:
    no engine's, and no function makes one."""

    def __init__(self) -> None:
        self._source: Callable[[], HeldRead | None] = lambda: None
        self._read: HeldRead | None = None
        self._loaded = False

    def install(self, source: Callable[[], HeldRead | None]) -> None:
        self._source, self._loaded = source, False

    def get(self) -> HeldRead | None:
        if not self._loaded:
            self._read, self._loaded = self._source(), True
        return self._read


DRAFT_READ = DraftRead()
