"""Wrappers in unchanged files that a change to other files can break.

Why: pre-commit hands eaglelint only the changed files, but a gap opens in the
wrapper when its *wrapped* class gains a method. SGLang 0.5.4.post2 added
`set_eagle3_layers_to_capture` to `DeepseekV2ForCausalLM` and so broke
deepseek_vl2.py, dots_vlm.py and kimi_vl.py, none of which changed.

How, cheaply: the tree is the `models` folder that holds each changed file (for a
file outside any, just its own folder, never a whole repository). Resolution
reaches a file only through an import that spells the file's module name, so the
files that can reach a changed file are found from their import lines alone (a
regular expression, no parsing): those whose imports name it, then those whose
imports name one of those, and so on. Of these, only the ones holding the wrapper
attribute are parsed and resolved.
A wrapper depends on a changed file when resolving it (its bases, the class its
attribute holds, that class's bases, and the modules the names pass through) reads
that file; a recording view of the Project
notes every module read, with a fresh Resolver per wrapper so that no memo hides one.
A wrapper whose model SGLang's registry picks by the checkpoint's architecture (llava.py)
may hold any registered text model: its verdict rests on none of them alone, so only its
own classes' files count, or every change to the tree would recheck it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...packs import pack_members, select_interfaces
from ..capture.wrapper_attrs import DEFAULT_WRAPPER_ATTRS
from ..python.discover import tree_files
from ..python.prefilter import WrapperAssignTest
from ..python.project import Project
from ..python.resolve import ClassEntity, Resolver
from ..syntax.sources import SourceError
from .held import HeldIndex, held_wrapper
from .served import REGISTRY_LOOKUP
from .wrappers import wrapped_candidates


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


def find_dependents(changed: list[Path], checked: set[Path], wrapper_attrs: tuple[str, ...],
                    project: Project, prefilter: bool = True,
                    members: tuple[str, ...] | None = None,
                    draft_members: tuple[str, ...] | None = None) -> list[Dependent]:
    """Wrappers outside `checked` whose resolution reads one of the `changed` files.

    `wrapper_attrs` as CheckOptions': () finds wrappers by what they hold (a language
    model providing one of `members`, default: the default packs'), else only those attributes.
    `prefilter=False` resolves every wrapper of the tree: the tests compare both.
    """
    changed_set = {Path(os.path.abspath(p)) for p in changed}
    checked = {Path(os.path.abspath(p)) for p in checked}
    by_name = wrapper_attrs or DEFAULT_WRAPPER_ATTRS
    assigns = WrapperAssignTest(by_name)
    raws: dict[Path, bytes] = {}
    for path in tree_files(changed_set):
        try:
            raws[path] = project.source(path).raw  # decoded, as before: a file that cannot be is left out
        except SourceError:
            continue
    packs = tuple(select_interfaces(None))
    members = members or pack_members(packs)
    if draft_members is None:  # given and empty (a pack with no draft-side member): none, not the defaults
        draft_members = pack_members(packs, "draft")
    held = None if wrapper_attrs else HeldIndex(raws, members, draft_members)
    resolver = Resolver(project)
    out: list[Dependent] = []
    for path in sorted(_reaching(changed_set, raws) if prefilter else raws):
        raw = raws[path]
        attrs = held.attrs(path, raw) if held and path not in checked else ()
        if path in checked or not (attrs or assigns.search(raw)):
            continue
        mod = project.summary(path, raw)
        if mod is None:
            continue
        for cls in mod.classes.values():
            attr = held_wrapper(resolver, ClassEntity(mod.path, cls.name), cls, by_name, attrs, members)
            if attr is None:
                continue
            reason = _dependency(project, ClassEntity(mod.path, cls.name), attr, changed_set)
            if reason:
                out.append(Dependent(path, cls.name, reason))
    return out


def _module_key(path: Path) -> tuple[bytes, bytes]:
    """(folder, module) as an import spells it: `models/deepseek_v2.py` -> (models, deepseek_v2)."""
    if path.name == "__init__.py":
        return path.parent.parent.name.encode(), path.parent.name.encode()
    return path.parent.name.encode(), path.stem.encode()


_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]*"
                     rb"(?P<names>\([^)]*\)|(?:[^\n\\]|\\\r?\n)*)|import[ \t]+(?P<plain>(?:[^\n\\]|\\\r?\n)*))",
                     re.MULTILINE)
_WORD = re.compile(rb"\w+")


def _import_keys(path: Path, raw: bytes) -> set[tuple[bytes, bytes]]:
    """Every (folder, module) pair the file's import statements can name, over-approximated."""
    keys: set[tuple[bytes, bytes]] = set()
    here = path.parent.name.encode()
    for m in _IMPORT.finditer(raw):
        if m["plain"] is not None:
            chains = [_WORD.findall(part.split(b" as ")[0]) for part in m["plain"].split(b",")]
            names: list[bytes] = []
        else:
            chain = [w for w in m["module"].split(b".") if w]
            if m["dots"]:
                base = path.parent
                for _ in range(len(m["dots"]) - 1):
                    base = base.parent
                chain = [base.name.encode(), *chain]
            chains, names = [chain], [w for w in _WORD.findall(m["names"]) if w != b"as"]
        for chain in chains:
            if not chain:
                continue
            keys.add((here, chain[0]))  # an absolute import also finds a sibling module
            keys.update(zip(chain, chain[1:], strict=False))
            keys.update((chain[-1], name) for name in names)
    return keys


def _reaching(changed: set[Path], raws: dict[Path, bytes]) -> set[Path]:
    """Files whose imports name a changed module, or a module whose imports do, and so on."""
    keys: dict[Path, set[tuple[bytes, bytes]]] = {}
    seen = {_module_key(p) for p in changed}
    frontier, reached = set(seen), set()
    while frontier:
        names = {name for _, name in frontier}
        found = set()
        for path, raw in raws.items():
            if path in reached or not any(name in raw for name in names):
                continue  # a plain bytes test first: most files never mention the name
            if path not in keys:
                keys[path] = _import_keys(path, raw)
            if keys[path] & frontier:
                found.add(path)
        reached |= found
        frontier = {_module_key(p) for p in found} - seen
        seen |= frontier
    return reached


# `ModelRegistry.resolve_model_cls(arch)` with a name that is not a literal (exprs.py `_registry`)
_CHOSEN_BY_CHECKPOINT = re.compile(REGISTRY_LOOKUP.encode() + rb"\(\s*(?![\"'\[(])")


def _dependency(project: Project, wrapper: ClassEntity, attr: str, changed: set[Path]) -> str | None:
    recording = _Recording(project)
    resolver = Resolver(recording)  # type: ignore[arg-type]
    own = resolver.mro(wrapper)
    candidates, _ = wrapped_candidates(resolver, wrapper, attr)
    wrapped = {cand: resolver.mro(cand) for cand in candidates}
    hit = recording.read & changed
    if _CHOSEN_BY_CHECKPOINT.search(project.raw(wrapper.path)):
        hit &= {Path(c.path) for c in own}
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
