"""vLLM: the EAGLE-3 interface is a marker protocol in the class bases (EGL030).

Why a rule of its own: vLLM does not call methods to find out whether a model
supports EAGLE-3; it asks `supports_eagle3(model)`, an `isinstance` check against the
runtime-checkable protocol `SupportsEagle3` (vllm/model_executor/models/interfaces.py),
which model classes list in their bases. A multimodal wrapper whose language model
class lists it, but which does not list it itself, is refused for EAGLE-3.

The protocol's two defaults are what the engine then calls on the wrapper
(gpu_model_runner: `get_eagle3_default_aux_hidden_state_layers()`, then
`set_aux_hidden_state_layers(layers)`). Both reach the language model through
`get_language_model()` or `self.language_model`, then its `.model`, and the setter
asserts that this decoder is an `EagleModelMixin`. So the marker alone is enough
only where that path lands on the language model and the language model itself
relies on the same defaults; otherwise (a DeepseekV2-style language model with its
own setter, a model held as `self.decoder`, or two attributes deep) the wrapper must
also delegate those members, as vLLM's own KimiK25ForConditionalGeneration does.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..capture.wrapper_attrs import DEFAULT_HELD_ATTR
from ..python.resolve import ClassEntity, Resolver
from ..syntax.class_body import class_node
from ..syntax.sources import SourceError

SETTER = "set_aux_hidden_state_layers"
DEFAULT_LAYERS = "get_eagle3_default_aux_hidden_state_layers"
LANGUAGE_MODEL_GETTER = "get_language_model"  # SupportsMultiModal's, which the defaults try first


@dataclass(frozen=True)
class Held:
    """A language model that a class holds: `self.<path[0]>[.<path[1]>]`, its candidate classes."""

    path: tuple[str, ...]
    classes: tuple[ClassEntity, ...]
    reasons: tuple[str, ...]

    @property
    def attr(self) -> str:
        return ".".join(self.path)


def marker_in_mro(resolver: Resolver, cls: ClassEntity, marker: str) -> ClassEntity | None:
    """The protocol class named `marker` among cls's resolved bases (across modules), or None."""
    return next((c for c in resolver.mro(cls) if c.qualname == marker), None)


def satisfies_structurally(resolver: Resolver, cls: ClassEntity, marker: ClassEntity) -> bool:
    """isinstance() with a runtime-checkable protocol also accepts a class that has every
    member the protocol (and its protocol bases) declares, without listing it."""
    names = set()
    for proto in resolver.mro(marker):
        info = resolver.info(proto)
        names |= {n for n in [*info.methods, *info.attrs] if not n.startswith("_")}
    return bool(names) and all(resolver.find_member(cls, n) is not None for n in names)


def listers(resolver: Resolver, held: Held, marker: str) -> list[tuple[ClassEntity, ClassEntity]]:
    """(candidate, the protocol class) for each held candidate that lists the marker."""
    out = []
    for cls in held.classes:
        found = marker_in_mro(resolver, cls, marker)
        if found is not None:
            out.append((cls, found))
    return out


def delegations(resolver: Resolver, wrapper: ClassEntity, held: Held, lm: ClassEntity,
                marker: ClassEntity) -> list[str]:
    """The protocol members the wrapper must forward to `lm`, beyond listing the marker.

    A member is forwarded where the wrapper's inherited default would not do what the
    language model does: the language model defines its own (DeepseekV2ForCausalLM sets
    `self.model.aux_hidden_state_layers`; the default would assert on its decoder), or
    the default cannot reach it (it tries `get_language_model()`, then `self.language_model`)."""
    reachable = held.path == (DEFAULT_HELD_ATTR,) or (  # the attribute the protocol's defaults fall back to
        resolver.find_member(wrapper, LANGUAGE_MODEL_GETTER) is not None
        and _marked(resolver, wrapper, held.path))
    out = []
    for name in (DEFAULT_LAYERS, SETTER):
        if resolver.find_member(wrapper, name) is not None:
            continue  # the wrapper has its own
        member = resolver.find_member(lm, name)
        if member is None:
            continue
        if not reachable or member.owner != marker:
            out.append(name)
    return out


def _marked(resolver: Resolver, wrapper: ClassEntity, path: tuple[str, ...]) -> bool:
    """`get_language_model()` finds a model held under another name where the class
    assigns it inside `with self._mark_language_model(...)` (or `_mark_composite_model`),
    and one held deeper where that call names the language model's class
    (`targets=`/`language_targets=`): read where it is assigned."""
    attr = path[0]
    owner = next((c for c in resolver.mro(wrapper) if attr in resolver.info(c).self_assigns), None)
    if owner is None:
        return False
    try:
        tree = resolver.project.tree(owner.path)
    except SourceError:
        return False
    node = class_node(tree, owner.qualname)
    for sub in ast.walk(node) if node is not None else ():
        if isinstance(sub, ast.With) and any(_marks(item.context_expr, deep=len(path) > 1) for item in sub.items):
            for inner in ast.walk(sub):
                targets = inner.targets if isinstance(inner, ast.Assign) else \
                    [inner.target] if isinstance(inner, ast.AnnAssign) else []
                if any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                       and t.value.id == "self" for t in targets):
                    return True
    return False


def _marks(call: ast.AST, deep: bool) -> bool:
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("_mark_language_model", "_mark_composite_model")):
        return False
    return not deep or any(k.arg in ("targets", "language_targets") for k in call.keywords)
