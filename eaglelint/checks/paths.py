"""Wrapper rules beyond member presence, as findings: the aux-hidden-state path
(EGL020-EGL023, SGLang) and the marker protocol (EGL030-EGL031, vLLM).

Why apart from checker.py: these rules look at a wrapper's forward and at its
wrapped model's decoder, not at which names its MRO has; checker.py finds the
wrappers once and hands them here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..analysis.presence import forwards_some, has_member
from ..analysis.resolve import ClassEntity, Resolver
from ..analysis.wrappers import is_component, wrapped_candidates
from ..findings import Finding, display_path
from ..packs import Interface, InterfaceMethod
from .aux import CAPTURES, AuxChecker
from .marker import CODE, DECODER_CODE, decoder_without_capture, marker_gaps


def path_findings(resolver: Resolver, wrappers: list[tuple[ClassEntity, str]], methods: list[InterfaceMethod],
                  interfaces: tuple[Interface, ...]) -> list[Finding]:
    out: list[Finding] = []
    captures = tuple(h for h in CAPTURES if h in {m.name for m in methods})
    if captures:
        out += _aux_findings(resolver, wrappers, captures)
    for iface in interfaces:
        if iface.engine == "vllm" and iface.marker:
            out += _marker_findings(resolver, wrappers, iface)
    return out


def _aux_findings(resolver: Resolver, wrappers: list[tuple[ClassEntity, str]], captures) -> list[Finding]:
    """The aux-hidden-state path of wrappers that a capture hook of the selected packs reaches."""
    out = []
    checker = AuxChecker(resolver)
    for wrapper, attr in wrappers:
        mod = resolver.module(wrapper.path)
        info = resolver.info(wrapper)
        if forwards_some(resolver, wrapper, attr, list(captures)) or is_component(mod, info):
            continue
        classes, _ = wrapped_candidates(resolver, wrapper, attr)
        for p in checker.problems(wrapper, attr, classes, has_member, captures):
            out.append(Finding(display_path(wrapper.path), p.line, p.column, p.code, p.message,
                               class_name=info.name, wrapper_attribute=attr,
                               wrapped_class=classes[0].qualname if classes else None,
                               entry_class=info.name in mod.entry_classes))
    return out


def _header_refusal(info) -> str | None:
    """Why vllm_fix.py cannot append the marker to this class header, or None."""
    if not info.bases or info.header_keywords:
        return "the class has no bases, or keyword arguments in its header; add the base by hand"
    return None


def _marker_findings(resolver: Resolver, wrappers: list[tuple[ClassEntity, str]], iface: Interface) -> list[Finding]:
    """vLLM wrappers whose language model lists the marker protocol while they do not."""
    out = []
    for wrapper, attr in wrappers:
        mod, info = resolver.module(wrapper.path), resolver.info(wrapper)
        if is_component(mod, info):
            continue
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
