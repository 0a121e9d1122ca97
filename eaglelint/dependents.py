"""Wrappers in unchanged files that a change to other files can break.

Why: pre-commit hands eaglelint only the changed files, but a gap opens in the
wrapper when its *wrapped* class gains a method. SGLang 0.5.4.post2 added
`set_eagle3_layers_to_capture` to `DeepseekV2ForCausalLM` and so broke
deepseek_vl2.py, dots_vlm.py and kimi_vl.py, none of which changed.

How, cheaply: the tree is the `models` folder that holds each changed file (else
its folder); its other files are tested for the wrapper attribute as bytes, and
only those that hold it are parsed. A wrapper depends on a changed file when
resolving it (its bases, the class its attribute holds, that class's bases, and the
modules the names pass through) reads that file; a recording view of the Project
notes every module read, with a fresh Resolver per wrapper so that no memo hides one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .checker import wrapped_candidates
from .discover import discover
from .modules import Project
from .resolve import ClassEntity, Resolver
from .sources import SourceError, read_source


@dataclass(frozen=True)
class Dependent:
    path: Path
    class_name: str
    reason: str  # shown to the user: why this file was checked though it was not given


class _Recording:
    """The Project, noting the path of every module summary a resolution asks for."""

    def __init__(self, project: Project) -> None:
        self._project = project
        self.read: set[Path] = set()

    def summary(self, path: Path, raw: bytes | None = None):
        self.read.add(Path(os.path.abspath(path)))
        return self._project.summary(path, raw)

    def __getattr__(self, name: str):
        return getattr(self._project, name)


def tree_of(path: Path) -> Path:
    """The `models` folder that holds a file (SGLang's layout), else the file's folder."""
    path = Path(os.path.abspath(path))
    for parent in path.parents:
        if parent.name == "models":
            return parent
    return path.parent


def find_dependents(changed: list[Path], checked: set[Path], wrapper_attrs: tuple[str, ...],
                    project: Project) -> list[Dependent]:
    """Wrappers outside `checked` whose resolution reads one of the `changed` files."""
    changed_set = {Path(os.path.abspath(p)) for p in changed}
    checked = {Path(os.path.abspath(p)) for p in checked}
    trees = sorted({tree_of(p) for p in changed_set})
    needles = [a.encode() for a in wrapper_attrs]
    out: list[Dependent] = []
    for path in discover(trees).files:
        if path in checked:
            continue
        try:
            raw = read_source(path).raw
        except SourceError:
            continue
        if not any(n in raw for n in needles):
            continue
        mod = project.summary(path, raw)
        if mod is None:
            continue
        for cls in mod.classes.values():
            attr = next((a for a in wrapper_attrs if a in cls.self_assigns), None)
            if attr is None:
                continue
            reason = _dependency(project, ClassEntity(mod.path, cls.name), attr, changed_set)
            if reason:
                out.append(Dependent(path, cls.name, reason))
    return out


def _dependency(project: Project, wrapper: ClassEntity, attr: str, changed: set[Path]) -> str | None:
    recording = _Recording(project)
    resolver = Resolver(recording)  # type: ignore[arg-type]
    own = resolver.mro(wrapper)
    candidates, _ = wrapped_candidates(resolver, wrapper, attr)
    wrapped = {cand: resolver.mro(cand) for cand in candidates}
    hit = recording.read & changed
    if not hit:
        return None
    why = []
    for cand, mro in wrapped.items():
        for cls in mro:
            if Path(cls.path) in changed:
                where = Path(cls.path).name
                why.append(f"its wrapped class {cls.qualname} is defined in {where}" if cls == cand else
                           f"its wrapped class {cand.qualname} inherits from {cls.qualname}, defined in {where}")
    why += [f"its base class {cls.qualname} is defined in {Path(cls.path).name}" for cls in own[1:]
            if Path(cls.path) in changed]
    if not why:
        why = [f"resolving self.{attr} reads {', '.join(sorted(p.name for p in hit))}"]
    return f"depends on changed {', '.join(sorted(p.name for p in hit))}: {'; '.join(why)}"
