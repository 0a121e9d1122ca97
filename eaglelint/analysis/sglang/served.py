"""Which classes SGLang serves: its model registry's set, found as the registry finds it.

Why follow the registry and not a spelling: `models/registry.py` `import_model_classes`
(0.5.9 and 0.5.23 alike) imports every module that `pkgutil.iter_modules` lists in the
models package, skipping subpackages (`if not ispkg`), and reads each module's
`EntryClass` attribute as it is once the module has run: a list is iterated, anything
else is taken for one class, and each class is keyed by its own `__name__`. So an
`EntryClass` built with `+=` or by a helper, a class imported from a subpackage, or an
`EntryClass` imported from another module, are served as surely as a literal list;
an `EntryClass` inside a subpackage is not (the registry never imports it there).
Here the same walk is made over the summaries, nothing imported: the top-level
modules of the folder that holds `registry.py`, each `EntryClass` evaluated with the
resolver (analysis/python/resolve.py).

`resolve_model_cls(name)` returns the registered class of that `__name__`; where the
name comes from a checkpoint's config, every registered text model can be the answer
(`text_models`: served, loaded as a target, with a head of its own, holding no other
language model).
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ..capture.wrapper_attrs import DEFAULT_HELD_ATTR
from ..python.entities import ClassEntity, FunctionEntity, SeqEntity, Unknown
from ..python.summary import ENTRY, LazyClasses, ModuleSummary
from ..syntax.refs import Ref
from ..syntax.sources import SourceError
from .roles import is_draft_name

if TYPE_CHECKING:
    from ..python.calls import CallReader
    from ..python.entities import Entity
    from ..python.project import Project
    from ..python.resolve import Resolver
    from ..syntax.scope import Scope

REGISTRY_FILE = "registry.py"
REGISTRY_LOOKUP = "resolve_model_cls"  # SGLang's ModelRegistry: architecture name -> EntryClass class
LOOKUP_REF = "registry"  # the kind of Ref a lookup is read into (RegistryLookup)
ENTRY_BYTES = ENTRY.encode()
# what a language model has and a bare decoder has not: its head, the logits computed from it,
# and the embedding and head it gives out (owners.py and analysis/sglang/held.py ask the same)
HEAD = "lm_head"
LOGITS = "logits_processor"
EMBED_AND_HEAD = "get_embed_and_head"


@dataclass
class Served:
    """The registry of one models folder: its classes by `__name__` (the first module, in
    the registry's order, that lists a name wins here; the registry would stop on the
    duplicate), and why some `EntryClass` values could not be read."""

    root: Path
    by_name: dict[str, ClassEntity] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    classes: frozenset[ClassEntity] = frozenset()


_roots: dict[str, Path] = {}  # a file's absolute path -> its registry's folder


def registry_root(path: str) -> Path:
    """The models folder whose registry would import the module of `path`: the nearest folder
    at or above the file's (three levels at most: a model's subpackage) that holds
    `registry.py`; else the file's own folder, read the same way."""
    found = _roots.get(path)
    if found is None:
        folder = Path(os.path.abspath(path)).parent
        found = next((c for c in (folder, *list(folder.parents)[:3]) if (c / REGISTRY_FILE).is_file()), folder)
        if os.path.isabs(path):  # a relative one names another file once the working directory changes
            _roots[path] = found
    return found


# The registry and its text models, kept per project, not per resolver: every resolver of a
# run asks the same (the checks', and the fix planner's, one per capture-member fix), and each
# would read 200 modules again. Renewed when a file turns out not to parse (Project.errors
# grows: the registry then reads without it); an internal error stores nothing half-made,
# as each answer is stored once complete.
_per_project: WeakKeyDictionary[Project, tuple[int, dict[str, Any]]] = WeakKeyDictionary()


def _project_memo(resolver: Resolver, name: str) -> dict:
    project = resolver.project
    held = _per_project.get(project)
    if held is None or held[0] != len(project.errors):
        held = _per_project[project] = (len(project.errors), {})
    return held[1].setdefault(name, {})


def served(resolver: Resolver, path: str) -> Served:
    """The registry's classes for the models folder of `path` (memoised per project)."""
    root = registry_root(path)
    memo: dict[Path, Served] = _project_memo(resolver, "served")
    if root not in memo:
        memo[root] = read_registry(resolver, root)
    return memo[root]


def is_served(resolver: Resolver, cls: ClassEntity) -> bool:
    """The engine can load cls as the model it serves: some registered module lists it."""
    return cls in served(resolver, cls.path).classes


# `EntryClass = [A, B]` or `EntryClass = A` at column 0, names only: the common spelling. The
# column-0 patterns here open with a newline, matched in the text with one put before it: `re`
# then jumps from newline to newline, where a MULTILINE `^` is tried at every character
_LITERAL = re.compile(rb"\n" + ENTRY_BYTES + rb"[ \t]*=[ \t]*(?:\[([\w\s,]*)\]|(\w+)[ \t]*(?:#[^\n]*)?$)", re.MULTILINE)


def read_registry(resolver: Resolver, root: Path, from_bytes: bool = True) -> Served:
    """The registered classes of the models folder `root`. `from_bytes`: a module whose
    registrations its bytes settle (`_listed_here`) is not parsed for them."""
    out = Served(root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return out
    for name in names:  # pkgutil.iter_modules: the folder's modules; a package is skipped
        stem = name[:-3]
        if not name.endswith(".py") or not stem.isidentifier() or stem == "__init__":
            continue
        path = root / name
        if path in resolver.project.errors:
            continue  # found not to parse: the registry's import of it fails, and it goes on
        try:
            raw = resolver.project.raw(path)
        except SourceError:
            continue
        if ENTRY_BYTES not in raw and b"import *" not in raw:
            continue  # no EntryClass: nothing registered (and nothing to parse)
        listed = _listed_here(raw) if from_bytes else None
        if listed is not None:
            for listed_name in listed:
                out.by_name.setdefault(listed_name, ClassEntity(str(path), listed_name))
            continue
        mod = resolver.module(str(path))
        if mod is None:
            continue  # the registry logs the import error and goes on
        for cls in module_entries(resolver, mod, raw, out.unread):
            out.by_name.setdefault(cls.qualname.rsplit(".", 1)[-1], cls)
    out.classes = frozenset(out.by_name.values())
    return out


def module_entries(resolver: Resolver, mod: ModuleSummary, raw: bytes, unread: list[str]) -> list[ClassEntity]:
    """The classes one module's `EntryClass` holds once the module has run: its first value and
    every `+=`, `.append`, `.extend` after it (`EntryClass += other.EntryClass` included),
    evaluated; why some could not be read goes to `unread`."""
    if mod.entry_refs:
        found = [e for r in mod.entry_refs for e in resolver.evaluate(r, mod.path)]
    else:  # bound by an import (`from .x import EntryClass`, a star import), if at all
        found = [e for e in resolver.lookup(mod.path, ENTRY)
                 if not (isinstance(e, Unknown) and ENTRY_BYTES not in raw)]
    return _classes(resolver, found, unread, Path(mod.path).name)


_CLASS_AT_0 = re.compile(rb"\nclass[ \t]+(\w+)")
# a name bound at column 0 otherwise: `Name = ...` / `Name: T = ...`, an import line, a def
_BOUND_AT_0 = re.compile(rb"\n(?:(\w+)\b[^\n=]*=(?!=)|(?:async[ \t]+)?def[ \t]+(\w+)|((?:from|import)\b[^\n]*))")
_WORD = re.compile(rb"\w+")


def _listed_here(raw: bytes) -> list[str] | None:
    """The classes a module registers, read from its bytes where that is certain: `EntryClass`
    appears once, as a literal list of names (or one name) at column 0, and each name is a
    class that the module defines at column 0 and binds nowhere else at column 0. Else
    None: the summary decides."""
    if raw.count(ENTRY_BYTES) != 1:
        return None
    text = b"\n" + raw
    found = _LITERAL.search(text)
    if found is None:
        return None
    listed = [n.strip() for n in (found[1] if found[1] is not None else found[2]).split(b",") if n.strip()]
    defined: dict[bytes, int] = {}
    for name in _CLASS_AT_0.findall(text):
        defined[name] = defined.get(name, 0) + 1
    if any(defined.get(name) != 1 or _bound_at_0(text, name) or not name.decode().isidentifier() for name in listed):
        return None
    return [n.decode() for n in listed]


def _bound_at_0(text: bytes, name: bytes) -> bool:
    """Whether a line of `text` (which starts with a newline) binds `name` as _BOUND_AT_0 reads a
    line: only a line that holds the name can, so only those are read (the pattern, tried at every
    line of a module, cost more than the rest of the registry's reading)."""
    at = text.find(name)
    while at >= 0:
        start = text.rfind(b"\n", 0, at)
        found = _BOUND_AT_0.match(text, start)
        if found is not None and (name in (found[1], found[2]) or name in _WORD.findall(found[3] or b"")):
            return True
        end = text.find(b"\n", at)
        at = text.find(name, end) if end >= 0 else -1
    return False


def _classes(resolver: Resolver, found: list, unread: list[str], where: str) -> list[ClassEntity]:
    """The classes an `EntryClass` value holds: a class, or the items of a list."""
    out: list[ClassEntity] = []
    for ent in found:
        if isinstance(ent, ClassEntity):
            out.append(ent)
        elif isinstance(ent, SeqEntity):
            for item in ent.items:
                out += [e for e in resolver.evaluate(item, ent.path, ent.owner) if isinstance(e, ClassEntity)]
                unread += [f"{where}: {e.reason}" for e in resolver.evaluate(item, ent.path, ent.owner)
                           if isinstance(e, Unknown)]
        elif isinstance(ent, Unknown):
            unread.append(f"{where}: {ent.reason}")
    return out


def text_models(resolver: Resolver, path: str) -> list[ClassEntity]:
    """The registered classes `resolve_model_cls` may return for a language model's
    architecture named only by a checkpoint: served, not a draft, with a head of its own
    (`lm_head` or `logits_processor` assigned along its bases, or a `get_embed_and_head`), and
    holding no language model itself (a multimodal wrapper is not a text model). In file
    order, then by line. Read from sketches: a class not parsed yet stays unparsed."""
    memo: dict[Path, list[ClassEntity]] = _project_memo(resolver, "served.text")
    registry = served(resolver, path)
    if registry.root not in memo:
        out = []
        for cls in registry.classes:
            if is_draft_name(cls.qualname.rsplit(".", 1)[-1], cls.path) or resolver.module(cls.path) is None:
                continue  # a draft; or a module that does not parse, whose import the registry skips
            sketches = [sketch(resolver, c) for c in ancestors(resolver, cls)]
            headed = any(HEAD in s.assigned or LOGITS in s.assigned or EMBED_AND_HEAD in s.members for s in sketches)
            if headed and not any(DEFAULT_HELD_ATTR in s.assigned for s in sketches):
                out.append(cls)
        memo[registry.root] = sorted(out, key=lambda c: (Path(c.path).name, sketch(resolver, c).line))
    return memo[registry.root]


@dataclass(frozen=True)
class Sketch:
    """What the candidates' tests need of a class: its line, its resolved bases, the names its
    body binds (methods, class attributes, and members added after it) and those its methods
    assign on `self`."""

    line: int
    bases: tuple[ClassEntity, ...]
    members: frozenset[str]
    assigned: frozenset[str]


# possessive `++`/`*+`: what follows each never matches what it would give back, so the matches
# are those of the plain pattern, found without retrying every shorter split
_DEF = re.compile(r"\n[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)")  # what _defs finds
_DEF_WORD = re.compile(r"def[ \t]+(\w+)")
_INDENT = re.compile(r"[ \t]+(?:async[ \t]+)?")
_CLASS_ATTR = re.compile(r"\n(?: {4}|\t)(\w++)[ \t]*+(?::[^=\n]*+)?=(?!=)")
_SELF_SET = re.compile(r"self[ \t]*+\.[ \t]*+(\w++)[ \t]*+(?::[^=\n]*+)?=(?!=)")


def _defs(text: str) -> list[str]:
    """`_DEF.findall(text)`, found from each `def`: the pattern opens with a newline, at which `re`
    tries it on every line. A `def` counts where its line holds only blanks (and `async`) before
    it; the first such on a line is the only one, and a `def` earlier on the line is not one."""
    out = []
    for found in _DEF_WORD.finditer(text):
        start = text.rfind("\n", 0, found.start())
        if start >= 0 and _INDENT.fullmatch(text, start + 1, found.start()):
            out.append(found[1])
    return out


def sketch(resolver: Resolver, cls: ClassEntity) -> Sketch:
    """A class's Sketch: from its summary once parsed, else from its text (the bases from its
    header, `header_bases`; the names from its body), which counting hundreds of registered
    candidates needs without parsing each (summary.py LazyClasses `pending_text`)."""
    memo: dict[ClassEntity, Sketch] = resolver.memos.setdefault("served.sketch", {})
    if cls not in memo:
        memo[cls] = _sketch(resolver, cls)
    return memo[cls]


def _sketch(resolver: Resolver, cls: ClassEntity) -> Sketch:
    mod = resolver.module(cls.path)
    assert mod is not None
    late = frozenset(member for _, _, member in mod.late_members.get(cls.qualname, []) if member)
    lazy = mod.classes if isinstance(mod.classes, LazyClasses) else None
    pending = lazy.pending_text(cls.qualname) if lazy is not None else None
    # the header parsed once, for this and for every later MRO through the class (Resolver.base_refs)
    refs = lazy.header_bases(cls.qualname) if lazy is not None and pending is not None else None
    if pending is not None and refs is not None:
        bases = tuple(dict.fromkeys(e for r in refs for e in resolver.evaluate(r, cls.path)
                                    if isinstance(e, ClassEntity) and e != cls))
        text = "\n" + pending[1]
        return Sketch(pending[0], bases, frozenset(_defs(text)) | frozenset(_CLASS_ATTR.findall(text)) | late,
                      frozenset(_SELF_SET.findall(text)))
    info = resolver.info(cls)
    added = set(late)
    for decorator in info.decorators:
        found = resolver.lookup(cls.path, decorator) if decorator.isidentifier() else []
        for fn in (resolver.function(f) for f in found if isinstance(f, FunctionEntity)):
            added |= set(fn.adds_members or ()) if fn is not None else set()
    resolved, _ = resolver.bases(cls)
    return Sketch(info.line, tuple(resolved), frozenset(info.methods) | frozenset(info.attrs) | frozenset(added),
                  frozenset(info.self_assigns))


def ancestors(resolver: Resolver, cls: ClassEntity) -> list[ClassEntity]:
    """cls and every class its sketches' bases reach (a set, not an MRO: membership is all the
    tests ask)."""
    out, todo = [cls], [cls]
    while todo:
        for base in sketch(resolver, todo.pop()).bases:
            if base not in out:
                out.append(base)
                todo.append(base)
    return out


def provides(resolver: Resolver, cls: ClassEntity, name: str) -> bool:
    """cls or a base defines, binds, assigns per instance or is given `name` after its body."""
    return any(name in s.members or name in s.assigned for s in map(lambda c: sketch(resolver, c),
                                                                     ancestors(resolver, cls)))


class RegistryLookup:
    """SGLang's `ModelRegistry.resolve_model_cls(arch)`, the engine's call hook (calls.py): read
    as a `registry` Ref that keeps the architecture names, evaluated as the registry answers."""

    names = (REGISTRY_LOOKUP,)

    def read(self, call: ast.Call, name: str, reader: CallReader) -> list[Ref] | None:
        return [lookup_ref(call, reader.scope)] if isinstance(call.func, ast.Attribute) else None

    def evaluate(self, resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None,
                 depth: int) -> list[Entity] | None:
        return registry_lookup(resolver, ref, path) if ref.kind == LOOKUP_REF else None


REGISTRY_CALLS = RegistryLookup()


def lookup_ref(call: ast.Call, scope: Scope | None) -> Ref:
    """`ModelRegistry.resolve_model_cls(arch)`, which returns `(model class, arch)`: a
    literal architecture name (or list of them, tried in order) is a `registry` Ref the
    resolver looks up among the registered classes; any other is decided at load time, by
    the config: a `registry` Ref without a name (any registered text model), whose `attr`
    says what chooses."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "architectures"), None)
    names = [] if arg is None else list(arg.elts) if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
    literal = [n.value for n in names if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    if names and len(literal) == len(names):
        return Ref(LOOKUP_REF, ",".join(literal))
    text = ast.unparse(arg)[:60] if arg is not None else "no architecture"
    params = [n for n, bound in (scope.exprs.items() if scope else ()) if any(
        isinstance(b, Ref) and b.kind == "param" for b in bound)]
    source = "the checkpoint's config" if any("config" in n for n in params) else "values known only at load time"
    return Ref(LOOKUP_REF, "", f"chosen at load time: SGLang's ModelRegistry.{REGISTRY_LOOKUP}({text}) looks up an "
                               f"architecture name that depends on {source}")


def registry_lookup(resolver: Resolver, ref: Ref, path: str) -> list[Entity]:
    """`ModelRegistry.resolve_model_cls("Arch")`: `(the class, "Arch")`, the class being the
    registered one of that `__name__` (the first name found, as the registry tries a list in
    order). Without a name (the checkpoint's config names it): one such pair for every
    registered text model, each a class the lookup may return."""
    registry = served(resolver, path)
    if not (registry.root / REGISTRY_FILE).is_file():
        return [Unknown(f"{registry.root.name} has no SGLang model registry ({REGISTRY_FILE})")]
    if not ref.name:
        found = text_models(resolver, path)
        if not found:
            return [Unknown(f"{ref.attr}, and no registered text model can be found in {registry.root.name}")]
        return [SeqEntity(c.path, None, (Ref("name", c.qualname), Ref("const", repr(c.qualname)))) for c in found]
    for name in ref.name.split(","):
        cls = registry.by_name.get(name)
        if cls is not None:
            return [SeqEntity(cls.path, None, (Ref("name", cls.qualname), Ref("const", repr(name))))]
    return [Unknown(f"no module of {registry.root.name} lists {ref.name.replace(',', ' or ')} in its EntryClass")]
