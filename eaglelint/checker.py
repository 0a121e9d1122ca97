"""Apply interface packs to the wrapper classes in a list of files: the findings.

A wrapper is a class that assigns `self.<wrapper attribute>` (default
`language_model`) in any method. For each, the wrapped class candidates are
resolved across modules; a method of a selected interface that some candidate has
(in its MRO) and that the wrapper's own MRO lacks is a finding, unless the wrapper
forwards unknown attributes with `__getattr__`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .interfaces import Interface, InterfaceMethod, load_codes
from .modules import Project, internal_error
from .refs import Ref
from .resolve import ClassEntity, InstanceEntity, Member, Resolver, Unknown
from .sources import SourceError, read_bytes

DEFAULT_WRAPPER_ATTRS = ("language_model",)
SEVERITY_BY_CALLED_ON = {"target": "EGL001", "draft": "EGL002"}


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
    debug: bool = False  # let an internal error propagate (with its traceback) instead of reporting it


def display_path(path: str | Path) -> str:
    """Relative to the working directory when inside it: what editors and CI link."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def check_files(files: list[Path], options: CheckOptions, project: Project | None = None) -> CheckResult:
    project = project or Project()
    project.debug = project.debug or options.debug
    resolver = Resolver(project)
    result = CheckResult()
    needles = [a.encode() for a in options.wrapper_attrs]
    raws: dict[Path, bytes] = {}
    wrappers: list[tuple[ClassEntity, str]] = []
    for path in files:
        try:
            raw = read_bytes(path)  # decoded only if parsed: a file that cannot hold a wrapper is not
        except SourceError as exc:
            result.findings.append(file_error(path, str(exc)))
            continue
        result.files_checked += 1
        raws[path] = raw
        if not any(n in raw for n in needles):
            continue  # cannot hold a wrapper: never parsed unless another file needs it
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
    for wrapper, attr in wrappers:
        try:
            result.findings.extend(_check_wrapper(resolver, wrapper, attr, methods, raws, project, options))
        except Exception as exc:
            if options.debug:
                raise
            result.findings.append(_wrapper_error(project, wrapper, exc))
            resolver = Resolver(project)  # its caches may hold answers the error cut short
    result.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code, f.method or ""))
    return result


def file_error(path: Path, reason: str) -> Finding:
    return Finding(display_path(path), 1, 1, "EGL999", f"cannot check {Path(path).name}: {reason}")


def _wrapper_error(project: Project, wrapper: ClassEntity, exc: Exception) -> Finding:
    """One wrapper that could not be analysed; the run goes on with the others."""
    if isinstance(exc, RecursionError):
        reason = f"{wrapper.qualname}: bases, names or expressions nested too deeply to analyse"
    else:
        reason = f"{wrapper.qualname}: {internal_error(exc)}"
    mod = project.summary(Path(wrapper.path))
    info = mod.classes.get(wrapper.qualname) if mod else None
    finding = file_error(Path(wrapper.path), reason)
    if info is None:
        return finding
    return replace(finding, line=info.line, column=info.column, class_name=info.name)


def _methods(interfaces: tuple[Interface, ...]) -> list[InterfaceMethod]:
    """One entry per method name; a method any pack calls on the target wins."""
    by_name: dict[str, InterfaceMethod] = {}
    for iface in interfaces:
        for m in iface.methods:
            if m.name not in by_name or (m.called_on == "target" and by_name[m.name].called_on != "target"):
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


def _check_wrapper(resolver, wrapper, attr, methods, raws, project, options) -> list[Finding]:
    info = resolver.info(wrapper)
    mod = resolver.module(wrapper.path)
    path = display_path(wrapper.path)
    if forwards_getattr(resolver, wrapper, attr) or _is_component(mod, info):
        return []
    classes, reasons = wrapped_candidates(resolver, wrapper, attr)
    if not classes:
        if not reasons:
            return []  # only ever None or constants
        subclasses = _affected_subclasses(resolver, wrapper, attr, None, raws, project)
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
        provider = _provider(resolver, classes, method.name)
        if provider is None:
            continue
        wrapped, member = provider
        subclasses = _affected_subclasses(resolver, wrapper, attr, method.name, raws, project)
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


def _provider(resolver: Resolver, classes: list[ClassEntity], name: str) -> tuple[ClassEntity, Member] | None:
    for cls in classes:
        member = resolver.find_member(cls, name)
        if member is not None:
            return cls, member
    return None


def _finding(path, info, attr, method: InterfaceMethod, wrapped: ClassEntity, member: Member,
             subclasses: list[str], entry: bool) -> Finding:
    where = f"{Path(member.owner.path).name}:{member.line}"
    via = "" if member.owner == wrapped else f" via {member.owner.qualname}"
    draft = " (the engine calls it only on draft models today)" if method.called_on == "draft" else ""
    also = f"; inherited by {', '.join(subclasses)}" if subclasses else ""
    message = (
        f"{info.name} lacks {method.name}, which its {attr} ({wrapped.qualname}{via}, {where}) "
        f"provides{draft}{also}; add a delegation (eaglelint fix)"
    )
    return Finding(
        path, info.line, info.column, SEVERITY_BY_CALLED_ON[method.called_on], message,
        class_name=info.name, wrapped_class=wrapped.qualname, method=method.name,
        wrapped_path=display_path(member.owner.path), wrapped_line=member.line,
        provider_class=member.owner.qualname, interface=method.interface,
        wrapper_attribute=attr, entry_class=entry, subclasses=tuple(subclasses),
    )


def _affected_subclasses(resolver, wrapper, attr, method, raws, project) -> list[tuple[str, bool]]:
    """Scanned classes that inherit the wrapper's gap, each with: is it in its EntryClass?"""
    out = []
    needle = wrapper.qualname.rsplit(".", 1)[-1].encode()
    for path, raw in raws.items():
        if needle not in raw:
            continue
        mod = project.summary(path, raw)
        if mod is None:
            continue
        for cls in mod.classes.values():
            sub = ClassEntity(mod.path, cls.name)
            if sub == wrapper or attr in cls.self_assigns or wrapper not in resolver.mro(sub):
                continue
            if method is None or not has_member(resolver, sub, method):
                label = cls.name if mod.path == wrapper.path else f"{cls.name} ({Path(mod.path).name})"
                out.append((label, cls.name in mod.entry_classes))
    return out
