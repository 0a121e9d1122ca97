"""vLLM: the EAGLE-3 interface is a marker protocol in the class bases (EGL030).

Why a rule of its own: vLLM does not call methods to find out whether a model
supports EAGLE-3; it asks `supports_eagle3(model)`, an `isinstance` check against the
runtime-checkable protocol `SupportsEagle3` (vllm/model_executor/models/interfaces.py),
which model classes list in their bases. A multimodal wrapper whose language model
class lists it, but which does not list it itself, is refused for EAGLE-3 even
though the protocol's default methods (which reach through `self.language_model`)
would work for it. The fix adds the protocol to the wrapper's bases and imports it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.class_body import class_node, local_nodes, method_node
from ..analysis.refs import Ref
from ..analysis.resolve import ClassEntity, InstanceEntity, Resolver
from ..analysis.sources import SourceError, parse_source, read_source
from ..analysis.wrappers import is_component, wrapped_candidates
from ..findings import Finding, display_path
from ..packs import Interface
from .context import WRAPPERS, Context, wrappers

CODE = "EGL030"
DECODER_CODE = "EGL031"
CODES = (CODE, DECODER_CODE)
MIXIN = "EagleModelMixin"  # vLLM's decoder mixin that collects the aux hidden states


@dataclass(frozen=True)
class MarkerGap:
    wrapper: ClassEntity
    wrapped: ClassEntity
    marker: ClassEntity  # the protocol class, where it is defined


def marker_in_mro(resolver: Resolver, cls: ClassEntity, marker: str) -> ClassEntity | None:
    """The protocol class named `marker` among cls's resolved bases (across modules), or None."""
    return next((c for c in resolver.mro(cls) if c.qualname == marker), None)


def _satisfies_structurally(resolver: Resolver, cls: ClassEntity, marker: ClassEntity) -> bool:
    """isinstance() with a runtime-checkable protocol also accepts a class that has every
    member the protocol (and its protocol bases) declares, without listing it."""
    names = set()
    for proto in resolver.mro(marker):
        info = resolver.info(proto)
        names |= {n for n in [*info.methods, *info.attrs] if not n.startswith("_")}
    return bool(names) and all(resolver.find_member(cls, n) is not None for n in names)


def marker_gaps(resolver: Resolver, wrapper: ClassEntity, wrapped: list[ClassEntity], marker: str) -> list[MarkerGap]:
    if marker_in_mro(resolver, wrapper, marker) is not None:
        return []
    for cls in wrapped:
        found = marker_in_mro(resolver, cls, marker)
        if found is not None and not _satisfies_structurally(resolver, wrapper, found):
            return [MarkerGap(wrapper, cls, found)]
    return []


def decoder_without_capture(resolver: Resolver, lm: ClassEntity) -> tuple[ClassEntity, int] | None:
    """The decoder class (`self.model` of the language model) whose own forward override
    never collects aux hidden states, though it inherits vLLM's EagleModelMixin."""
    for ent in resolver.evaluate(Ref("self", "model"), lm.path, lm):
        if not isinstance(ent, InstanceEntity):
            continue
        decoder = ent.cls
        if not any(c.qualname == MIXIN for c in resolver.mro(decoder)):
            continue
        member = resolver.find_member(decoder, "forward")
        if member is None or member.owner.qualname == MIXIN or member.function is None:
            continue
        try:
            tree = parse_source(read_source(Path(member.owner.path)))
        except SourceError:
            continue
        cls = class_node(tree, member.owner.qualname)
        forward = method_node(cls, "forward") if cls is not None else None
        if forward is not None and not _collects(forward):
            return member.owner, member.line
    return None


def _collects(forward: ast.AST) -> bool:
    """Mentions the aux hidden states, or hands the work to a base's forward."""
    for node in local_nodes(forward):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
        if "aux_hidden_state" in name or name == "_maybe_add_hidden_state":
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "forward" \
                and isinstance(node.func.value, ast.Call) and getattr(node.func.value.func, "id", "") == "super":
            return True
    return False


SUBJECTS = WRAPPERS


def _marker_packs(context: Context) -> list[Interface]:
    return [i for i in context.interfaces if i.engine == "vllm" and i.marker]


def subjects(context: Context) -> list[ClassEntity]:
    return wrappers(context) if _marker_packs(context) else []


def _header_refusal(info) -> str | None:
    """Why fix/marker.py cannot append the marker to this class header, or None."""
    if not info.bases or info.header_keywords:
        return "the class has no bases, or keyword arguments in its header; add the base by hand"
    return None


def check(context: Context, wrapper: ClassEntity) -> list[Finding]:
    """A vLLM wrapper whose language model lists a selected pack's marker protocol while it does not."""
    resolver, attr = context.resolver, context.wrappers[wrapper]
    mod, info = resolver.module(wrapper.path), resolver.info(wrapper)
    if is_component(mod, info):
        return []
    out: list[Finding] = []
    for iface in _marker_packs(context):
        for gap in marker_gaps(resolver, wrapper, wrapped_candidates(resolver, wrapper, attr)[0], iface.marker):
            lister = next(c for c in resolver.mro(gap.wrapped) if gap.marker in resolver.bases(c)[0])
            where = f"{Path(lister.path).name}:{resolver.info(lister).line}"
            via = "" if lister == gap.wrapped else f" via {lister.qualname}"
            common: dict[str, Any] = dict(
                class_name=info.name, wrapped_class=gap.wrapped.qualname, interface=iface.name,
                wrapper_attribute=attr, entry_class=info.name in mod.entry_classes)
            broken = decoder_without_capture(resolver, gap.wrapped)
            if broken is not None:
                decoder, line = broken
                out.append(Finding(
                    display_path(wrapper.path), info.line, info.column, DECODER_CODE,
                    f"{info.name} does not list {iface.marker}, but neither would it work with it: its {attr} "
                    f"({gap.wrapped.qualname}{via}, {where}) lists it while its decoder {decoder.qualname} "
                    f"overrides forward ({Path(decoder.path).name}:{line}) without collecting aux hidden states; "
                    f"fix the decoder first", wrapped_path=display_path(decoder.path), wrapped_line=line,
                    provider_class=decoder.qualname, **common))
                continue
            out.append(Finding(
                display_path(wrapper.path), info.line, info.column, CODE,
                f"{info.name} does not list {iface.marker} in its bases, while its {attr} ({gap.wrapped.qualname}"
                f"{via}, {where}) does; vLLM's supports_eagle3() refuses the wrapper for EAGLE-3. Add "
                f"{iface.marker} to its bases (eaglelint fix)",
                wrapped_path=display_path(lister.path), wrapped_line=resolver.info(lister).line,
                provider_class=lister.qualname, fix_refusal=_header_refusal(info), **common))
    return out
