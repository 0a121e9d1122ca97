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
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.capture.wrapper_attrs import DEFAULT_WRAPPER_ATTRS
from ..analysis.python.prefilter import SETTER_CALL, WrapperAssignTest, is_dynamic_attr
from ..analysis.python.project import Project
from ..analysis.syntax.sources import SourceError
from ..findings import INTERNAL_ERROR, CheckResult, Finding, file_error
from ..fix.styles import DEFAULT_STYLE
from ..packs import Interface, pack_members, sglang_members

if TYPE_CHECKING:
    from ..analysis.python.resolve import ClassEntity

@dataclass(frozen=True)
class CheckOptions:
    interfaces: tuple[Interface, ...]
    # () finds wrappers by what they hold (and `language_model` by name); given, only these attributes
    wrapper_attrs: tuple[str, ...] = ()
    style: str = DEFAULT_STYLE  # how the fixes the findings carry delegate (fix/delegation.py)


def check_files(files: Iterable[Path], options: CheckOptions, project: Project | None = None,
                jobs: int = 1) -> CheckResult:
    """Findings for `files`; `jobs` > 1 summarises candidate files in that many processes."""
    project = project or Project()
    result = CheckResult()
    by_name = options.wrapper_attrs or DEFAULT_WRAPPER_ATTRS  # held by name: any value, resolved or not
    assigns = WrapperAssignTest(by_name)
    readable, raws = _read(project, list(files), result)
    run_key = _run_key(project, options, readable)
    cache = project.cache
    cached = cache.get(run_key) if cache is not None and run_key else None
    if isinstance(cached, tuple) and _deps_unchanged(project, cached[1]):
        project.save_status_memo()
        return cached[0]
    unread = [path for path in readable if path not in raws]
    for path in unread:  # a miss: every file's bytes
        try:
            raws[path] = project.raw(path)
        except SourceError as exc:  # gone since its status was taken
            result.findings.append(file_error(path, str(exc)))
    raws = {path: raws[path] for path in readable if path in raws}  # in the order given
    result.files_checked = len(raws)
    if unread:  # keyed by the bytes read, which a status may have vouched for wrongly
        run_key = _run_key(project, options, list(raws))
    # a cache hit needs none of the analysis or the checks: imported here, on a miss
    from ..analysis.python.resolve import ClassEntity
    from ..analysis.sglang.held import HeldIndex, held_wrapper, tree_raws
    from .context import Context
    from .registry import plan_fixes, run_checks, subject_files

    methods = sglang_members(options.interfaces)
    members = pack_members(options.interfaces)
    held = None if options.wrapper_attrs else \
        HeldIndex(tree_raws(project, raws), members, pack_members(options.interfaces, "draft"))
    # a file without an assignment of either kind cannot hold a wrapper: parsed only if a resolution needs it
    candidates = held.every_attrs(raws) if held else [(path, raw, ()) for path, raw in raws.items()]
    candidates = [(path, raw, attrs) for path, raw, attrs in candidates if attrs or assigns.search(raw)]
    known_errors = set(project.errors)
    held_attrs = set(by_name).union(*(attrs for _, _, attrs in candidates))
    builders = {m[2].decode() for _, raw, _ in candidates for m in _BUILDER.finditer(raw)
                if m[1].decode() in held_attrs}
    holding = {path: may_hold(by_name + attrs, builders) for path, _, attrs in candidates}
    needles = {path: hold_needles(by_name + attrs, builders) for path, _, attrs in candidates}

    def analyse() -> list[Finding]:
        """Wrapper discovery, then every rule family: run again from the start, with a fresh
        resolver, when a file read lazily turns out not to parse (Project.retrying)."""
        wrappers: dict[ClassEntity, str] = {}
        context = Context(project, raws, methods, options.interfaces, wrappers, by_name, frozenset(held_attrs))
        resolver = context.resolver  # one resolver: what discovery resolved, the checks find resolved
        if jobs > 1:  # the classes discovery and the families will read first, parsed in parallel
            wanted: dict[Path, tuple[re.Pattern[str] | None, bool]] = {
                path: (pattern, True) for path, pattern in holding.items()}
            for path, text in subject_files(context).items():
                if path not in wanted:
                    wanted[path] = (text, False)
                elif text is None:  # a family reads every class
                    wanted[path] = (None, True)
                else:
                    wanted[path] = (re.compile(f"{holding[path].pattern}|{text.pattern}"), True)
            project.prefetch([(path, raws[path], text, subclasses) for path, (text, subclasses) in wanted.items()],
                             jobs)
        found: list[Finding] = []
        for path, raw, attrs in candidates:
            mod = project.summary(path, raw)
            if mod is None:
                found.append(file_error(path, project.errors.get(Path(os.path.abspath(path)), "")))
                continue
            for cls in mod.classes_matching(holding[path], subclasses=True, needles=needles[path]):
                attr = held_wrapper(resolver, ClassEntity(mod.path, cls.name), cls, by_name, attrs, members)
                if attr is not None:
                    wrappers[ClassEntity(mod.path, cls.name)] = attr
        return found + run_checks(context)

    result.findings.extend(project.retrying(analyse))
    # a module that only a resolution reached, and that cannot be parsed: the dependent's
    # EGL010 gives this as its reason, and the file itself is reported, given or not
    reported = {os.path.abspath(f.path) for f in result.findings if f.code == INTERNAL_ERROR}
    result.findings += [file_error(p, why) for p, why in project.errors.items()
                        if p not in known_errors and str(p) not in reported]
    result.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code, f.method or ""))
    # carried, and cached with them
    result.findings = project.retrying(lambda: plan_fixes(result.findings, project, options.style))
    project.save()  # the classes this run parsed, for the next run
    if cache is not None and run_key:
        scanned = {Path(os.path.abspath(p)) for p in raws}
        deps = [(str(p), k) for p, k in project.digests.items() if p not in scanned]
        cache.put(run_key, (result, deps))
    project.save_status_memo()
    return result


def may_hold(attrs: tuple[str, ...], builders: set[str]) -> re.Pattern[str]:
    """What a class's text must have to be a wrapper: `self.<attr>` for one of `attrs`, or the
    name of a builder some base assigns one from (`self.llm = self.init_llm(...)`: a subclass
    chooses by overriding `init_llm`, or a class attribute `llm_cls`). A class without it,
    and without such a base in its file, is no wrapper: a lazily parsed module leaves it
    unparsed (analysis/sglang/held.py `held_wrapper` decides the others)."""
    names = "|".join(map(re.escape, (a for a in attrs if not is_dynamic_attr(a))))
    # also set by a call or given by a getter (prefilter.py WrapperAssignTest); a setter call
    # whose name is not a literal, where one holds a language model
    pattern = rf"self\s*\.\s*(?:{names})\b|[\"'](?:{names})[\"']|def\s+(?:{names})\b"
    if any(is_dynamic_attr(a) for a in attrs):
        pattern += "|" + SETTER_CALL.decode()
    if builders:
        pattern += r"|\b(?:" + "|".join(map(re.escape, sorted(builders))) + r")\b"
    return re.compile(pattern)


def hold_needles(attrs: tuple[str, ...], builders: set[str]) -> tuple[str, ...]:
    """Strings of which every match of `may_hold(attrs, builders)` holds one: the attributes'
    and builders' names, and the setters' for a name set at run time."""
    out = [a for a in attrs if not is_dynamic_attr(a)] + sorted(builders)
    if any(is_dynamic_attr(a) for a in attrs):
        out += ["add_module", "register_module", "setattr"]  # `__setattr__` holds `setattr`
    return tuple(dict.fromkeys(out))


# possessive `++`/`*+`: what follows each never matches what it would give back, so the matches
# are those of the plain pattern, found without retrying every shorter split
_BUILDER = re.compile(rb"self\s*+\.\s*+(\w++)[ \t]*+(?::[^=\n]*+)?=[ \t]*+self\s*+\.\s*+(\w+)")


def _read(project: Project, files: list[Path], result: CheckResult) -> tuple[list[Path], dict[Path, bytes]]:
    """The files that can be read, in order, and the bytes of those read: a file the status
    memo knows unchanged (Project.unchanged_since) has its digest noted and is read only on
    a miss of the run cache. One that cannot be read is an EGL999 in `result`."""
    project.use_status_memo(files)
    raws: dict[Path, bytes] = {}
    readable: list[Path] = []
    for path in files:
        if not project.unchanged_since(path):
            try:
                raws[path] = project.raw(path)  # decoded only if parsed: non-wrapper files are not
            except SourceError as exc:
                result.findings.append(file_error(path, str(exc)))
                continue
        readable.append(path)
    return readable, raws


def _run_key(project: Project, options: CheckOptions, paths: list[Path]) -> str | None:
    if project.cache is None or len(paths) < 2:
        return None  # one file alone (pre-commit on one file) is cheap to redo from summaries
    parts = [repr(options).encode()]  # no working directory: findings hold absolute paths
    for path in paths:
        key = project.digests[Path(os.path.abspath(path))]  # noted when the file was read, or by its status
        parts += [os.path.abspath(path).encode(), key.encode()]
    return project.cache.run_key(parts)


def _deps_unchanged(project: Project, deps: list[tuple[str, str]]) -> bool:
    cache = project.cache
    assert cache is not None  # a run result came from it
    for path, key in deps:
        try:  # through the same guard as every other read: a dependency turned FIFO must not block
            if not project.unchanged_since(Path(path)):
                project.raw(path)  # notes the digest of what it read
            if project.digests[Path(os.path.abspath(path))] != key:
                return False
        except (OSError, SourceError):
            return False
    return True
