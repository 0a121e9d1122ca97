"""Apply interface packs to the wrapper classes in a list of files: the findings.

A wrapper is a class that assigns `self.language_model`, or any `self.<attr>` an
instance of a language model that provides members of the packs (held.py); with
wrapper attributes given, a class that assigns one of those. For each, the wrapped class candidates are
resolved across modules; a method of a selected interface that some candidate has
(in its MRO) and that the wrapper's own MRO lacks is a finding, unless the wrapper
forwards unknown attributes with `__getattr__`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.project import Project
from ..analysis.resolve import ClassEntity
from ..analysis.sources import SourceError, read_bytes
from ..packs import Interface, InterfaceMethod, load_codes

if TYPE_CHECKING:
    from ..analysis.resolve import ClassEntity

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
    every_candidate: bool = True  # every class the attribute may hold provides `method`
    fix_refusal: str | None = None  # why `eaglelint fix` cannot write this one, though its code is fixable

    @property
    def severity(self) -> str:
        return load_codes()[self.code].severity

    @property
    def fixable(self) -> bool:
        """`eaglelint fix` writes the change: the code has a fix and this shape does not refuse it."""
        return load_codes()[self.code].fixable and self.fix_refusal is None


@dataclass
class CheckResult:
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0


@dataclass(frozen=True)
class CheckOptions:
    interfaces: tuple[Interface, ...]
    # () finds wrappers by what they hold (and `language_model` by name); given, only these attributes
    wrapper_attrs: tuple[str, ...] = ()


def display_path(path: str | Path) -> str:
    """Relative to the working directory when inside it: what editors and CI link."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def check_files(files: list[Path], options: CheckOptions, project: Project | None = None,
                jobs: int = 1) -> CheckResult:
    """Findings for `files`; `jobs` > 1 summarises candidate files in that many processes."""
    project = project or Project()
    result = CheckResult()
    by_name = options.wrapper_attrs or DEFAULT_WRAPPER_ATTRS  # held by name: any value, resolved or not
    assigns = WrapperAssignTest(by_name)
    raws: dict[Path, bytes] = {}
    wrappers: list[tuple[ClassEntity, str]] = []
    for path in files:
        try:
            raw = read_bytes(path, project.max_file_size)  # decoded only if parsed: non-wrapper files are not
            project.note_read(path, raw)
        except SourceError as exc:
            result.findings.append(file_error(path, str(exc)))
            continue
        result.files_checked += 1
        raws[path] = raw
    run_key = _run_key(project, options, raws)
    cached = project.cache.get(run_key) if run_key else None
    if isinstance(cached, tuple) and _deps_unchanged(project, cached[1]):
        return cached[0]
    # the analysis builds on this module, and a cache hit needs none of it: imported here
    from ..analysis.resolve import ClassEntity, Resolver
    from .held import HeldIndex, held_wrapper, tree_raws
    from .marker_scan import marker_findings
    from .members import Run
    from .owner import owner_findings
    from .registry import check_wrappers, class_failure

    resolver = Resolver(project)
    methods = _methods(options.interfaces)
    members = pack_members(options.interfaces)
    held = None if options.wrapper_attrs else \
        HeldIndex(tree_raws(project, raws), members, pack_members(options.interfaces, "draft"))
    # a file without an assignment of either kind cannot hold a wrapper: parsed only if a resolution needs it
    candidates = [(path, raw, held.attrs(path, raw) if held else ()) for path, raw in raws.items()]
    candidates = [(path, raw, attrs) for path, raw, attrs in candidates if attrs or assigns.search(raw)]
    known_errors = set(project.errors)
    project.prefetch([(path, raw) for path, raw, _ in candidates], jobs)
    for path, raw, attrs in candidates:
        mod = project.summary(path, raw)
        if mod is None:
            result.findings.append(file_error(path, project.errors.get(Path(os.path.abspath(path)), "")))
            continue
        for cls in mod.classes.values():
            attr = held_wrapper(resolver, ClassEntity(mod.path, cls.name), cls, by_name, attrs, members)
            if attr is not None:
                wrappers.append((ClassEntity(mod.path, cls.name), attr))
    result.findings.extend(check_wrappers(Run(resolver, project, raws), wrappers, methods, options.interfaces))
    result.findings.extend(owner_findings(resolver, project, raws, methods, lambda c, e: class_failure(project, c, e)))
    result.findings.extend(marker_findings(resolver, project, raws, options.interfaces, by_name,
                                           lambda c, e: class_failure(project, c, e)))
    # a module that only a resolution reached, and that cannot be parsed: the dependent's
    # EGL010 gives this as its reason, and the file itself is reported, given or not
    reported = {os.path.abspath(f.path) for f in result.findings if f.code == "EGL999"}
    result.findings += [file_error(p, why) for p, why in project.errors.items()
                        if p not in known_errors and str(p) not in reported]
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


class WrapperAssignTest:
    """Bytes test for `self.<attr> =` / `self.<attr>: T`: files without it cannot hold a wrapper.

    Also `self.language_model, self.vision = ...`: a line that starts with it, a comma and
    then an `=` on that line (a call argument on a line of its own has no `=` after it).
    Three patterns, not one alternation: each starts with the literal `self`, which `re`
    scans for quickly; a pattern anchored at every line start is tried only on files
    where the comma form occurs (an alternation made the warm run 10x slower)."""

    def __init__(self, attrs: tuple[str, ...]):
        names = rb"self\s*\.\s*(?:" + b"|".join(re.escape(a.encode()) for a in attrs) + rb")\s*"
        self._plain = re.compile(names + rb"(?::|=(?!=))")
        self._comma = re.compile(names + rb",")
        self._tuple = re.compile(rb"^[ \t]*" + names + rb",[^\n=(]*=(?!=)", re.MULTILINE)

    def search(self, raw: bytes) -> bool:
        return bool(self._plain.search(raw) or (self._comma.search(raw) and self._tuple.search(raw)))


def file_error(path: Path, reason: str) -> Finding:
    return Finding(display_path(path), 1, 1, "EGL999", f"cannot check {Path(path).name}: {reason}")


def pack_members(interfaces: tuple[Interface, ...], called_on: str | None = None) -> tuple[str, ...]:
    """The member names of the selected SGLang packs (those the engine calls on `called_on`
    models, if given): what makes a held class a language model."""
    return tuple(m.name for m in _methods(interfaces) if called_on in (None, m.called_on))


def _methods(interfaces: tuple[Interface, ...]) -> list[InterfaceMethod]:
    """One entry per member name of the SGLang packs; the strictest use wins (target, then required)."""
    by_name: dict[str, InterfaceMethod] = {}
    for iface in interfaces:
        for m in iface.methods if iface.engine == "sglang" else ():
            old = by_name.get(m.name)
            if old is None or (m.called_on == "target", m.required) > (old.called_on == "target", old.required):
                by_name[m.name] = m
    return list(by_name.values())
