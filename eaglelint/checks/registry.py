"""Each wrapper analysed in isolation: an error on one is an EGL999 for it, and the run goes on.

Why: a linter that runs on strangers' pull requests meets code no test foresaw (an
inheritance chain thousands deep, a construct the resolver mishandles). As ruff does
for a file it cannot lint, the class is reported with the reason, and every other
wrapper is still checked; `--debug` lets the error propagate with its traceback.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..analysis.project import Project, internal_error
from ..analysis.resolve import ClassEntity, Resolver
from ..findings import Finding, file_error
from ..packs import Interface, InterfaceMethod
from .members import Run, check_wrapper
from .paths import path_findings

Wrapper = tuple[ClassEntity, str]


def check_wrappers(run: Run, wrappers: list[Wrapper], methods: list[InterfaceMethod],
                   interfaces: tuple[Interface, ...]) -> list[Finding]:
    out: list[Finding] = []
    checked: list[Wrapper] = []
    for wrapper, attr in wrappers:
        try:
            out += check_wrapper(run, wrapper, attr, methods)
            checked.append((wrapper, attr))
        except Exception as exc:
            out.append(class_failure(run.project, wrapper, exc))
            run = Run(Resolver(run.project), run.project, run.raws)  # caches may hold half-made answers
    try:  # all at once: the path rules share parsed files between wrappers
        return out + path_findings(run.resolver, checked, methods, interfaces)
    except Exception:
        if run.project.debug:
            raise
    resolver = Resolver(run.project)  # one of them failed: again one at a time, to name it
    for one in checked:
        try:
            out += path_findings(resolver, [one], methods, interfaces)
        except Exception as exc:
            out.append(class_failure(run.project, one[0], exc))
            resolver = Resolver(run.project)
    return out


def class_failure(project: Project, wrapper: ClassEntity, exc: Exception) -> Finding:
    if project.debug:
        raise exc
    deep = "bases, names or expressions nested too deeply to analyse"
    why = f"{wrapper.qualname}: {deep if isinstance(exc, RecursionError) else internal_error(exc)}"
    info = Resolver(project).info(wrapper)  # the wrapper's module was summarised: it was found there
    return replace(file_error(Path(wrapper.path), why), line=info.line, column=info.column, class_name=info.name)
