"""Wrapper rules beyond member presence, as findings: the aux-hidden-state path
(EGL020-EGL023, SGLang); the vLLM marker protocol (EGL030-EGL031) is vllm_check.py's.

Why apart from checker.py: these rules look at a wrapper's forward and at its
wrapped model's decoder, not at which names its MRO has; checker.py finds the
wrappers once and hands them here.
"""

from __future__ import annotations

from ..analysis.presence import forwards_some, has_member
from ..analysis.resolve import ClassEntity, Resolver
from ..analysis.roles import is_draft
from ..packs import Interface, InterfaceMethod
from .aux import CAPTURES, AuxChecker
from .members import is_component, wrapped_candidates
from .run import Finding, display_path


def path_findings(resolver: Resolver, wrappers: list[tuple[ClassEntity, str]], methods: list[InterfaceMethod],
                  interfaces: tuple[Interface, ...]) -> list[Finding]:
    out: list[Finding] = []
    captures = tuple(h for h in CAPTURES if h in {m.name for m in methods})
    if captures:
        out += _aux_findings(resolver, wrappers, captures)
    return out


def _aux_findings(resolver: Resolver, wrappers: list[tuple[ClassEntity, str]], captures) -> list[Finding]:
    """The aux-hidden-state path of wrappers that a capture hook of the selected packs reaches."""
    out = []
    checker = AuxChecker(resolver)
    for wrapper, attr in wrappers:
        mod = resolver.module(wrapper.path)
        info = resolver.info(wrapper)
        if forwards_some(resolver, wrapper, attr, list(captures)) or is_component(mod, info) \
                or is_draft(wrapper):
            continue  # the engine captures aux hidden states on the target only
        classes, _ = wrapped_candidates(resolver, wrapper, attr)
        for p in checker.problems(wrapper, attr, classes, has_member, captures):
            out.append(Finding(display_path(wrapper.path), p.line, p.column, p.code, p.message,
                               class_name=info.name, wrapper_attribute=attr,
                               wrapped_class=classes[0].qualname if classes else None,
                               entry_class=info.name in mod.entry_classes))
    return out
