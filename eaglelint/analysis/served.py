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
resolver (analysis/resolve.py).

`resolve_model_cls(name)` returns the registered class of that `__name__`; where the
name comes from a checkpoint's config, every registered text model can be the answer
(`text_models`: served, loaded as a target, with a head of its own, holding no other
language model).
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from .entities import ClassEntity, FunctionEntity, SeqEntity, Unknown
from .exprs import expression_refs
from .prefilter import DEFAULT_HELD_ATTR
from .refs import Ref
from .roles import is_draft
from .scope import import_bindings
from .sources import SourceError
from .summary import ENTRY, LazyClasses, class_header

if TYPE_CHECKING:
    from .project import Project
    from .resolve import Resolver

REGISTRY_FILE = "registry.py"
ENTRY_BYTES = ENTRY.encode()
# what a language model has and a bare decoder has not: its head, the logits computed from it,
# and the embedding and head it gives out (owners.py and checks/held.py ask the same)
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


_roots: dict[Path, Path] = {}


def registry_root(path: str) -> Path:
    """The models folder whose registry would import the module of `path`: the nearest folder
    at or above the file's (three levels at most: a model's subpackage) that holds
    `registry.py`; else the file's own folder, read the same way."""
    folder = Path(os.path.abspath(path)).parent
    if folder not in _roots:
        _roots[folder] = next((c for c in (folder, *list(folder.parents)[:3]) if (c / REGISTRY_FILE).is_file()),
                              folder)
    return _roots[folder]


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
        if mod.entry_refs:
            found = [e for r in mod.entry_refs for e in resolver.evaluate(r, mod.path)]
        else:  # bound by an import (`from .x import EntryClass`, a star import), if at all
            found = [e for e in resolver.lookup(mod.path, ENTRY)
                     if not (isinstance(e, Unknown) and ENTRY_BYTES not in raw)]
        for cls in _classes(resolver, found, out.unread, name):
            out.by_name.setdefault(cls.qualname.rsplit(".", 1)[-1], cls)
    out.classes = frozenset(out.by_name.values())
    return out


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
    bound: set[bytes] = set()
    for assigned, function, imports in _BOUND_AT_0.findall(text):
        bound |= {assigned, function} | set(_WORD.findall(imports))
    if any(defined.get(name) != 1 or name in bound or not name.decode().isidentifier() for name in listed):
        return None
    return [n.decode() for n in listed]


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
            if is_draft(cls):
                continue
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
_DEF = re.compile(r"\n[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)")
_CLASS_ATTR = re.compile(r"\n(?: {4}|\t)(\w++)[ \t]*+(?::[^=\n]*+)?=(?!=)")
_SELF_SET = re.compile(r"self[ \t]*+\.[ \t]*+(\w++)[ \t]*+(?::[^=\n]*+)?=(?!=)")


def sketch(resolver: Resolver, cls: ClassEntity) -> Sketch:
    """A class's Sketch: from its summary once parsed, else from its text (the header parsed
    for the bases, the body read for the names), which counting hundreds of registered
    candidates needs without parsing each (summary.py LazyClasses `pending_text`)."""
    memo: dict[ClassEntity, Sketch] = resolver.memos.setdefault("served.sketch", {})
    if cls not in memo:
        memo[cls] = _sketch(resolver, cls)
    return memo[cls]


def _sketch(resolver: Resolver, cls: ClassEntity) -> Sketch:
    quick = _sketch_unsummarised(resolver, cls)
    if quick is not None:
        return quick
    mod = resolver.module(cls.path)
    assert mod is not None
    late = frozenset(member for _, _, member in mod.late_members.get(cls.qualname, []) if member)
    pending = mod.classes.pending_text(cls.qualname) if isinstance(mod.classes, LazyClasses) else None
    node = None
    if pending is not None:
        try:
            node = ast.parse(pending[1].strip() + "\n    pass\n").body[0]
        except (SyntaxError, ValueError, RecursionError, IndexError):
            node = None
    if pending is not None and isinstance(node, ast.ClassDef) and node.name == cls.qualname:
        refs = [r for b in node.bases for r in expression_refs(b.value if isinstance(b, ast.Subscript) else b, None)]
        bases = tuple(dict.fromkeys(e for r in refs for e in resolver.evaluate(r, cls.path)
                                    if isinstance(e, ClassEntity) and e != cls))
        text = "\n" + pending[2]
        return Sketch(pending[0], bases, frozenset(_DEF.findall(text)) | frozenset(_CLASS_ATTR.findall(text)) | late,
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


# -- a class of a module not summarised yet, read from the module's text ---------------------
#
# Why: the registry's candidates are mostly `class XForCausalLM(nn.Module)` in modules that
# nothing else reads (a cold check of 0.5.23 summarised 75 modules for their sketches alone).
# A summary made now would leave such a class unparsed, and `_sketch` would read it from its
# text (`pending_text`); what that needs of the module besides the class's own lines is the
# binding of each name its bases start from, and the members added after its body. Where the
# text settles both (each such name bound by one import or `class` statement at column 0 and
# only read elsewhere, the class named by no other module-level statement but a literal
# `EntryClass`), and the module would be cut as `summarize_lazily` cuts it, the same Sketch is
# made here from the same lines, the bases evaluated through that binding.


def _sketch_unsummarised(resolver: Resolver, cls: ClassEntity) -> Sketch | None:
    """cls's Sketch, exactly as `_sketch` makes it from a summary made now, read without one;
    None where the module has a summary already (or the cache holds one), or its text leaves
    a doubt: `_sketch` then makes it."""
    project = resolver.project
    memo: dict[str, tuple[Path, _Text | None]] = resolver.memos.setdefault("served.text", {})
    if cls.path not in memo:
        path = Path(os.path.abspath(cls.path))
        memo[cls.path] = path, None if path in project._summaries else _Text.read(project, path)
    path, module = memo[cls.path]
    if "." in cls.qualname or path in project._summaries:
        return None
    pending = module.pending(cls.qualname) if module is not None else None
    if module is None or pending is None:
        return None
    first, start, end = pending
    text = module.text
    head = text[start:end].split("\n", 21)  # lines as split_lines cuts them (no \r here): class_header reads 21
    header = class_header([line + "\n" for line in head[:-1]] + head[-1:], 1)
    bases = _header_bases(resolver, cls, module, header, (start, start + len(header)))
    if bases is None or not _named_only_here(module, cls.qualname, (start, end)) \
            or path in project._summaries:  # evaluating the bases came back to this module
        return None
    body = "\n" + text[start:end]
    return Sketch(first, bases, frozenset(_DEF.findall(body)) | frozenset(_CLASS_ATTR.findall(body)),
                  frozenset(_SELF_SET.findall(body)))


# a line that starts with code at column 0 (summary.py `code_at_0`), found after its newline,
# where no line starts with whitespace other than a space or a tab (`_ODD_START`)
_START = re.compile(r"\n[^\s#)\]}]")
_ODD_START = re.compile(r"\n[^\S \t\n]")
_QUOTES = ('"""', "'''")
_STATEMENT_LIKE = re.compile(r"(?:class|def|async|from|import)\b|@")
# what may stand before a triple quote (after it: a quote) where another string hides it
_NEXT_TO = ("'", '"', "\\")
# a triple quote after a `#` on its line
_COMMENTED_QUOTE = re.compile(r"#[^\n]*(?:\"\"\"|''')")
_CONTINUED = re.compile(r"\\\s*$", re.MULTILINE)
_TOP = re.compile(r"\n(?:(class)|(?:async[ \t]+)?def)[ \t]+(\w+)")  # a class or function at column 0
_INNER_DEF = re.compile(r"\n[ \t]+(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
# a column-0 statement whose block may define a top-level name again (summary.py `walk_local`)
_BLOCK = re.compile(r"\n(?:if|elif|else|try|except|finally|for|while|with|async|match)\b")
_IMPORT_LINE = re.compile(r"import\b")
_LITERAL_TEXT = re.compile(_LITERAL.pattern.decode(), re.MULTILINE)


def _strings_hide_nothing(text: str, starts: list[int]) -> bool:
    """No triple-quoted string holds a line at column 0 that reads as a `class`, `def`,
    decorator or import statement (`code_at_0` does not know strings: such a line would be cut
    as one), each triple quote read where it stands: none on a line after a `#`, next to
    another quote or after a backslash (where a comment or another string may hide it)."""
    if _COMMENTED_QUOTE.search(text):
        return False
    ahead = {quote: text.find(quote) for quote in _QUOTES}  # the next of each kind
    while True:
        at = min((found for found in ahead.values() if found >= 0), default=-1)
        if at < 0:
            return True
        quote = text[at:at + 3]
        close = text.find(quote, at + 3)
        if close < 0 or any(text[q - 1:q] in _NEXT_TO or text[q + 3:q + 4] in _NEXT_TO[:2] for q in (at, close)):
            return False
        for k in range(bisect.bisect_right(starts, at), bisect.bisect_left(starts, close)):
            if _STATEMENT_LIKE.match(text, starts[k]):
                return False
        for kind, found in ahead.items():
            if 0 <= found < close + 3:
                ahead[kind] = text.find(kind, close + 3)


@dataclass
class _Text:
    """A module's text as `summarize_lazily` would cut it, for `_sketch_unsummarised`: where each
    line that starts with code at column 0 begins (`code_at_0`), and its import lines."""

    text: str
    starts: list[int]
    imports: dict[int, str]  # where a line holding the word `import` begins -> the line
    classes: dict[str, int]  # where each `class` line at column 0 begins (each name is there once)
    _entry: tuple[int, int] | None = None
    _entry_read: bool = False

    def entry(self) -> tuple[int, int] | None:
        """Where a literal `EntryClass` list (or name) stands, the module's only `EntryClass`."""
        if not self._entry_read:
            self._entry_read = True
            found = _LITERAL_TEXT.search("\n" + self.text) if self.text.count(ENTRY) == 1 else None
            # the match opens with the newline put before the text: its span, less one, is in the text
            self._entry = (found.start() - 1, found.end() - 1) if found is not None else None
        return self._entry

    @classmethod
    def read(cls, project: Project, path: Path) -> _Text | None:
        """None where the summary would not be made fresh and lazily, or a lazy read might cut it
        otherwise: the cache holds a summary (one read from it may have classes parsed); a
        NUL, a \\r, a backslash at a line's end (a string or statement may run across a
        column-0 line); a triple-quoted string that runs across a column-0 line (a `class`
        line there may be no statement); a top-level class or function name defined again
        inside a block (`summarize_lazily` then reads the module whole)."""
        try:
            raw = project.raw(path)
            text = project.source(path).text
        except SourceError:
            return None
        if project.cache is not None and project.cache.has(project.digests.get(path) or project.note_read(path, raw)):
            return None
        lined = "\n" + text  # a match's newline there is the one before its line: its start is the line's, in text
        if "\x00" in text or "\r" in text or _CONTINUED.search(text) or _ODD_START.search(lined):
            return None
        starts = [m.start() for m in _START.finditer(lined)]
        if not _strings_hide_nothing(text, starts):
            return None
        cuts = [*starts, len(text)]
        found = [(m[1], m[2], m.start()) for m in _TOP.finditer(lined)]
        classes = {name: at for kind, name, at in found if kind}
        top = [name for _, name, _ in found]
        if len(set(top)) != len(top):
            return None  # a name at column 0 twice: one may be decorated, or left in the module's parse
        blocks = {n for m in _BLOCK.finditer(lined)
                  for n in _INNER_DEF.findall(text, m.start(), cuts[bisect.bisect_right(cuts, m.start())])}
        if blocks & set(top):
            return None
        imports: dict[int, str] = {}
        for m in _IMPORT_LINE.finditer(text):
            begin = text.rfind("\n", 0, m.start()) + 1
            if begin not in imports:
                end = text.find("\n", m.start())
                imports[begin] = text[begin:end if end >= 0 else len(text)]
        return cls(text, starts, imports, classes)

    def pending(self, name: str) -> tuple[int, int, int] | None:
        """(first line, where it begins, where it ends) of top-level class `name` as
        `class_chunks` cuts it: its header at column 0, the only one of its name, undecorated,
        its triple quotes paired; None otherwise."""
        text = self.text
        start = self.classes.get(name)
        if start is None:
            return None
        k = bisect.bisect_left(self.starts, start)
        if k == len(self.starts) or self.starts[k] != start or k and text.startswith("@", self.starts[k - 1]):
            return None
        end = self.starts[k + 1] if k + 1 < len(self.starts) else len(text)
        if any(text.count(quote, start, end) % 2 for quote in _QUOTES):
            return None
        return text.count("\n", 0, start) + 1, start, end


def _header_bases(resolver: Resolver, cls: ClassEntity, module: _Text, header: str,
                  span: tuple[int, int]) -> tuple[ClassEntity, ...] | None:
    """The bases of the header as `_sketch` resolves them in module scope, each name they start
    from taken as bound by its one binding (`_bound`); None where the header does not parse
    alone as cls's, a base is more than a dotted name, or a name's binding is in doubt."""
    try:
        node = ast.parse(header.strip() + "\n    pass\n").body[0]
    except (SyntaxError, ValueError, RecursionError, IndexError):
        return None
    if not isinstance(node, ast.ClassDef) or node.name != cls.qualname:
        return None
    refs = [r for b in node.bases for r in expression_refs(b.value if isinstance(b, ast.Subscript) else b, None)]
    bound: dict[str, Ref | ClassEntity] = {}
    for ref in refs:
        root = ref
        while root.kind == "attr" and len(root.args) == 1:
            root = root.args[0]
        if root.kind != "name":
            return None
        if root.name not in bound:
            found = _bound(module, cls.path, root.name, span)
            if found is None:
                return None
            bound[root.name] = found
    found_bases: list[ClassEntity] = []
    for ref in refs:
        binding = bound.get(ref.name) if ref.kind == "name" else None
        if isinstance(binding, ClassEntity):  # `lookup` of a name a `class` statement binds
            found_bases.append(binding)
        elif any(isinstance(b, ClassEntity) for b in bound.values()) and ref.kind != "name":
            return None  # an attribute of a class of this module: `member` would read the class
        else:
            found_bases += [e for e in resolver.evaluate(_through(ref, bound), cls.path) if isinstance(e, ClassEntity)]
    return tuple(dict.fromkeys(e for e in found_bases if e != cls))


def _through(ref: Ref, bound: dict[str, Ref | ClassEntity]) -> Ref:
    """`ref` (a name, or attributes of one) with its name replaced by the import that binds it."""
    if ref.kind == "name":
        binding = bound[ref.name]
        assert isinstance(binding, Ref)
        return binding
    return Ref(ref.kind, ref.name, ref.attr, tuple(_through(a, bound) for a in ref.args))


def _words(text: str, name: str, reads: bool = True) -> list[int]:
    """Where `name` occurs in text as a name of its own: a whole word, not an attribute
    (`x.name`). `reads` False: not where an attribute of it is taken (`name.x`) either."""
    if len(name) < _FOUND_BY_PATTERN:  # short and frequent (`nn`): one pattern, kept by `re`, finds them
        found = [m.start() for m in re.finditer(re.escape(name) + (r"\b" if reads else r"\b(?![ \t]*\.)"), text)]
    else:  # rare: found as text, without compiling a pattern per name
        found = []
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            if not (text[end:end + 1] and ("a" + text[end:end + 1]).isidentifier()) \
                    and (reads or _READ_AFTER.match(text, end) is None):
                found.append(at)
            at = text.find(name, at + len(name))
    out = []
    for at in found:
        before = text[at - 1:at]
        if not (before == "." or before and ("a" + before).isidentifier()):
            out.append(at)
    return out


_FOUND_BY_PATTERN = 8
_READ_AFTER = re.compile(r"[ \t]*\.")


_DEFINES = re.compile(r"(?:(class)|(?:async[ \t]+)?def)[ \t]+(\w+)")


def _binders(module: _Text, name: str, skip: tuple[int, int], reads: bool) -> set[tuple[int, str]]:
    """The module-level statements that may bind `name` (or, with `reads`, do anything with it),
    as (index in `starts`, "class" / "def" for the statement whose own name it is, else
    "statement"). Not counted: `skip`, a literal `EntryClass` list, and the lines of a class or
    function (its body, header and decorators): the summary reads no module-level binding
    there. Without `reads`, `name.attr` on a line without `import` is not counted either."""
    text = module.text
    found = _words(text, name, reads)
    if not reads:  # `import name.sub` binds it
        found += [begin + at for begin, line in module.imports.items() if name in line for at in _words(line, name)]
    out: set[tuple[int, str]] = set()
    entry = module.entry()
    for at in found:
        if skip[0] <= at < skip[1] or entry is not None and entry[0] <= at < entry[1]:
            continue
        k = bisect.bisect_right(module.starts, at) - 1
        head = _DEFINES.match(text, module.starts[k]) if k >= 0 else None
        if head is None and k >= 0 and text.startswith("@", module.starts[k]):
            continue  # a decorator's line: read there
        if head is None:
            out.add((k, "statement"))
        elif head.start(2) == at:
            out.add((k, "class" if head[1] else "def"))
    return out


def _bound(module: _Text, path: str, name: str, header: tuple[int, int]) -> Ref | ClassEntity | None:
    """What the module binds `name` to, as the summary would record it (`ModuleSummary.names`),
    where one statement alone may bind it: a `class` statement (its class), or an import
    statement at column 0 that binds it once (its Ref). None where that is in doubt."""
    binders = _binders(module, name, header, reads=False)
    if len(binders) != 1:
        return None
    ((k, kind),) = binders
    if kind == "class":
        return ClassEntity(path, name)
    text = module.text
    start = module.starts[k]
    if kind != "statement" or not text.startswith(("from ", "import "), start):
        return None
    end = module.starts[k + 1] if k + 1 < len(module.starts) else len(text)
    try:
        stmts = ast.parse(text[start:end]).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if len(stmts) != 1 or not isinstance(stmts[0], (ast.Import, ast.ImportFrom)):
        return None
    refs = [ref for local, ref in import_bindings(stmts[0]) if local == name]
    return refs[0] if len(refs) == 1 else None


def _named_only_here(module: _Text, name: str, body: tuple[int, int]) -> bool:
    """No module-level statement but its own names the class (a literal `EntryClass` list
    aside): none adds members to it after its body (`late_members`) or binds its name again."""
    return not _binders(module, name, body, reads=True)
