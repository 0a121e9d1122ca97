"""Apply interface packs to the wrapper classes in a list of files: the findings.

A wrapper is a class that assigns `self.<wrapper attribute>` (default
`language_model`) in any method. For each, the wrapped class candidates are
resolved across modules; a method of a selected interface that some candidate has
(in its MRO) and that the wrapper's own MRO lacks is a finding, unless the wrapper
forwards unknown attributes with `__getattr__`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .interfaces import Interface, InterfaceMethod, load_codes
from .modules import Project
from .refs import Ref
from .resolve import ClassEntity, InstanceEntity, Member, Resolver, Unknown
from .sources import SourceError, read_bytes

DEFAULT_WRAPPER_ATTRS = ("language_model",)
SEVERITY_BY_CALLED_ON = {"target": "EGL001", "draft": "EGL002"}
OPTIONAL_CODE = "EGL003"  # a target member the engine tests for (hasattr/getattr) and copes without


def code_for(member: InterfaceMethod) -> str:
    if member.called_on == "target" and not member.required:
        return OPTIONAL_CODE
    return SEVERITY_BY_CALLED_ON[member.called_on]


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    message: str
    class_name: str = ""
    wrapped_class: str | None = None
    method: str | None = None
    wrapped_path: str | None = None
    wrapped_line: int | None = None
    provider_class: str | None = None
    interface: str | None = None
    wrapper_attribute: str | None = None
    entry_class: bool = False
    subclasses: tuple[str, ...] = ()
    included_because: str | None = None  # set for a file checked only because it depends on a changed one

    @property
    def severity(self) -> str:
        return load_codes()[self.code].severity

    @property
    def fixable(self) -> bool:
        return load_codes()[self.code].fixable


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0


@dataclass(frozen=True)
class CheckOptions:
    interfaces: tuple[Interface, ...]
    wrapper_attrs: tuple[str, ...] = DEFAULT_WRAPPER_ATTRS


def display_path(path: str | Path) -> str:
    """Relative to the working directory when inside it: what editors and CI link."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def check_files(files: list[Path], options: CheckOptions, project: Project | None = None,
                jobs: int = 1) -> CheckResult:
    """Findings for `files`; `jobs` > 1 summarises candidate files in that many processes."""
    project = project or Project()
    resolver = Resolver(project)
    result = CheckResult()
    assigns = wrapper_assignment_pattern(options.wrapper_attrs)
    raws: dict[Path, bytes] = {}
    wrappers: list[tuple[ClassEntity, str]] = []
    candidates: list[tuple[Path, bytes]] = []
    for path in files:
        try:
            raw = read_bytes(path)  # decoded only if parsed: a file that cannot hold a wrapper is not
            project.note_read(path, raw)
        except SourceError as exc:
            result.findings.append(file_error(path, str(exc)))
            continue
        result.files_checked += 1
        raws[path] = raw
        if assigns.search(raw):
            candidates.append((path, raw))
        # else: it cannot hold a wrapper, and is parsed only if a resolution needs it
    run_key = _run_key(project, options, raws)
    cached = project.cache.get(run_key) if run_key else None
    if isinstance(cached, tuple) and _deps_unchanged(project, cached[1]):
        return cached[0]
    project.prefetch(candidates, jobs)
    for path, raw in candidates:
        mod = project.summary(path, raw)
        if mod is None:
            result.findings.append(file_error(path, project.errors.get(Path(os.path.abspath(path)), "")))
            continue
        for cls in mod.classes.values():
            for attr in options.wrapper_attrs:
                if attr in cls.self_assigns:
                    wrappers.append((ClassEntity(mod.path, cls.name), attr))
                    break
    methods = _methods(options.interfaces)
    from .isolation import check_wrappers, class_failure  # build on this module: imported late
    from .owner_rules import owner_findings

    result.findings.extend(check_wrappers(_Run(resolver, project, raws), wrappers, methods, options.interfaces))
    result.findings.extend(owner_findings(resolver, project, raws, methods, lambda c, e: class_failure(project, c, e)))
    result.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code, f.method or ""))
    if run_key:
        scanned = {Path(os.path.abspath(p)) for p in raws}
        deps = [(str(p), k) for p, k in project.digests.items() if p not in scanned]
        project.cache.put(run_key, (result, deps))
    return result


def _run_key(project: Project, options: CheckOptions, raws: dict[Path, bytes]) -> str | None:
    if project.cache is None or len(raws) < 2:
        return None  # one file alone (pre-commit on one file) is cheap to redo from summaries
    parts = [repr(options).encode(), os.getcwd().encode()]
    for path in raws:
        key = project.digests[Path(os.path.abspath(path))]  # noted when the file was read
        parts += [os.path.abspath(path).encode(), key.encode()]
    return project.cache.run_key(parts)


def _deps_unchanged(project: Project, deps: list[tuple[str, str]]) -> bool:
    for path, key in deps:
        try:
            with open(path, "rb") as fh:
                if project.cache.key(fh.read()) != key:
                    return False
        except OSError:
            return False
    return True


def wrapper_assignment_pattern(attrs: tuple[str, ...]) -> re.Pattern[bytes]:
    """Bytes test for `self.<attr> =` / `self.<attr>: T`: files without it cannot hold a wrapper."""
    names = b"|".join(re.escape(a.encode()) for a in attrs)
    return re.compile(rb"self\s*\.\s*(?:" + names + rb")\s*(?::|=(?!=))")


def file_error(path: Path, reason: str) -> Finding:
    return Finding(display_path(path), 1, 1, "EGL999", f"cannot check {Path(path).name}: {reason}")


def _methods(interfaces: tuple[Interface, ...]) -> list[InterfaceMethod]:
    """One entry per member name of the SGLang packs; the strictest use wins (target, then required)."""
    by_name: dict[str, InterfaceMethod] = {}
    for iface in interfaces:
        for m in iface.methods if iface.engine == "sglang" else ():
            old = by_name.get(m.name)
            if old is None or (m.called_on == "target", m.required) > (old.called_on == "target", old.required):
                by_name[m.name] = m
    return list(by_name.values())


def wrapped_candidates(resolver: Resolver, wrapper: ClassEntity, attr: str) -> tuple[list[ClassEntity], list[str]]:
    """Classes `self.<attr>` may hold, and why the rest could not be resolved."""
    classes: list[ClassEntity] = []
    reasons: list[str] = []
    for assign in resolver.info(wrapper).self_assigns.get(attr, []):
        for value in assign.values:
            for ent in resolver.evaluate(value, wrapper.path, wrapper):
                if isinstance(ent, InstanceEntity):
                    if ent.cls not in classes:
                        classes.append(ent.cls)
                elif isinstance(ent, Unknown):
                    reasons.append(ent.reason)
                else:
                    kind = type(ent).__name__.removesuffix("Entity").lower()
                    reasons.append(f"line {assign.line}: assigned a {kind}, not an instance")
    return classes, list(dict.fromkeys(reasons))


def forwards_getattr(resolver: Resolver, cls: ClassEntity, attr: str) -> bool:
    member = resolver.find_member(cls, "__getattr__")
    return member is not None and attr in resolver.info(member.owner).getattr_forwards


@dataclass
class _Run:
    """What one check run shares between wrappers."""

    resolver: Resolver
    project: Project
    raws: dict[Path, bytes]
    subclasses: dict = field(default_factory=dict)


def _check_wrapper(run: _Run, wrapper: ClassEntity, attr: str, methods: list[InterfaceMethod]) -> list[Finding]:
    resolver = run.resolver
    info = resolver.info(wrapper)
    mod = resolver.module(wrapper.path)
    path = display_path(wrapper.path)
    if forwards_getattr(resolver, wrapper, attr) or _is_component(mod, info):
        return []
    classes, reasons = wrapped_candidates(resolver, wrapper, attr)
    if not classes:
        if not reasons:
            return []  # only ever None or constants
        subclasses = _affected_subclasses(run, wrapper, attr, None)
        also = f"; inherited by {', '.join(s for s, _ in subclasses)}" if subclasses else ""
        return [Finding(path, info.line, info.column, "EGL010",
                        f"{info.name} holds self.{attr}, but its class cannot be resolved: "
                        f"{'; '.join(reasons[:3])}{also}", class_name=info.name, wrapper_attribute=attr,
                        entry_class=info.name in mod.entry_classes or any(e for _, e in subclasses),
                        subclasses=tuple(s for s, _ in subclasses))]
    out = []
    for method in methods:
        if has_member(resolver, wrapper, method.name):
            continue
        provider = _provider(resolver, classes, method.name, method.kind != "method")
        if provider is None:
            continue
        wrapped, member = provider
        subclasses = _affected_subclasses(run, wrapper, attr, method.name)
        entry = info.name in mod.entry_classes or any(is_entry for _, is_entry in subclasses)
        out.append(_finding(path, info, attr, method, wrapped, member, [s for s, _ in subclasses], entry))
    return out


def has_member(resolver: Resolver, cls: ClassEntity, name: str) -> bool:
    """Defined or inherited, or bound per instance (`self.get_embed_and_head = ...`)."""
    if resolver.find_member(cls, name) is not None:
        return True
    return any(name in resolver.info(c).self_assigns for c in resolver.mro(cls))


def _is_component(mod, info) -> bool:
    """A class that another class of its module builds as a part (`self.thinker = W(...)`),
    and that is not in EntryClass, is never the top-level model the engine calls."""
    if info.name in mod.entry_classes:
        return False
    made = Ref("call", args=(Ref("name", info.name),))
    return any(
        made in assign.values
        for other in mod.classes.values() if other is not info
        for assigns in other.self_assigns.values() for assign in assigns
    )


def _provider(resolver: Resolver, classes: list[ClassEntity], name: str,
              instance_attrs: bool = False) -> tuple[ClassEntity, Member] | None:
    """The first candidate that has `name`; for attributes and properties, an instance
    attribute set in a method (`self.capture_aux_hidden_states = False`) counts too."""
    for cls in classes:
        member = resolver.find_member(cls, name)
        if member is not None:
            return cls, member
    for cls in classes if instance_attrs else ():
        for owner in resolver.mro(cls):
            assigns = resolver.info(owner).self_assigns.get(name)
            if assigns:
                return cls, Member(owner, assigns[0].line, None)
    return None


def _finding(path, info, attr, method: InterfaceMethod, wrapped: ClassEntity, member: Member,
             subclasses: list[str], entry: bool) -> Finding:
    where = f"{Path(member.owner.path).name}:{member.line}"
    via = "" if member.owner == wrapped else f" via {member.owner.qualname}"
    draft = " (the engine calls it only on draft models today)" if method.called_on == "draft" else \
        " (the engine tests for it and falls back without it)" if not method.required else ""
    also = f"; inherited by {', '.join(subclasses)}" if subclasses else ""
    message = (
        f"{info.name} lacks {method.name}, which its {attr} ({wrapped.qualname}{via}, {where}) "
        f"provides{draft}{also}; add a delegation (eaglelint fix)"
    )
    return Finding(
        path, info.line, info.column, code_for(method), message,
        class_name=info.name, wrapped_class=wrapped.qualname, method=method.name,
        wrapped_path=display_path(member.owner.path), wrapped_line=member.line,
        provider_class=member.owner.qualname, interface=method.interface,
        wrapper_attribute=attr, entry_class=entry, subclasses=tuple(subclasses),
    )


def _affected_subclasses(run: _Run, wrapper: ClassEntity, attr: str, method: str | None) -> list[tuple[str, bool]]:
    """Scanned classes that inherit the wrapper's gap, each with: is it in its EntryClass?"""
    out = []
    for sub, entry in _subclasses(run, wrapper, attr):
        if method is None or not has_member(run.resolver, sub, method):
            label = sub.qualname if sub.path == wrapper.path else f"{sub.qualname} ({Path(sub.path).name})"
            out.append((label, entry))
    return out


def _subclasses(run: _Run, wrapper: ClassEntity, attr: str) -> list[tuple[ClassEntity, bool]]:
    """Scanned subclasses of a wrapper that do not hold the model themselves (memoised)."""
    if (wrapper, attr) in run.subclasses:
        return run.subclasses[(wrapper, attr)]
    out = []
    needle = wrapper.qualname.rsplit(".", 1)[-1].encode()
    for path, raw in run.raws.items():
        if needle not in raw:
            continue
        mod = run.project.summary(path, raw)
        for cls in mod.classes.values() if mod else ():
            sub = ClassEntity(mod.path, cls.name)
            if sub != wrapper and attr not in cls.self_assigns and wrapper in run.resolver.mro(sub):
                out.append((sub, cls.name in mod.entry_classes))
    run.subclasses[(wrapper, attr)] = out
    return out
