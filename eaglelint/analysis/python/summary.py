"""Per-module summaries: all that later stages need from one file, taken in one `ast` pass.

Why plain `ast` and not astroid trees: a summary is small, plain data (so it can be
cached and compared), costs one parse, and never executes or imports the code it
describes. Expressions that later stages must evaluate across modules (a wrapped
class, a base class, what a helper returns) are kept as symbolic `Ref`s; names local
to a function are substituted here, while the function's scope is at hand.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import itertools
import re
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from ..syntax.class_body import class_statements, dotted, late_members, members_added_to_argument, star_module
from ..syntax.forwarding import Node, compile_getattr, string_set
from ..syntax.refs import Ref
from ..syntax.scope import Scope, import_bindings, walk_local
from ..syntax.sources import SourceLines, split_lines
from ..syntax.textscan import Anchored
from .calls import DRAFT_READ
from .exprs import MAX_EXPANSION, expression_refs
from .method_facts import only_raises_not_implemented, reads_held, super_calls
from .prefilter import dynamic_attr


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # posonly | pos | vararg | kwonly | varkw
    annotation: str | None = None
    default: str | None = None


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    line: int
    params: tuple[Param, ...]
    returns_value: bool
    returns: tuple[Ref, ...] = ()
    decorators: tuple[str, ...] = ()
    return_annotation: str | None = None
    is_async: bool = False
    # a class decorator that hands back its argument: the members it adds to it (() none: harmless);
    # None for any other function, or one whose changes cannot be read (class_body.py)
    adds_members: tuple[str, ...] | None = None
    super_calls: tuple[Ref, ...] = ()  # `super().m(...)` / `Base.m(self, ...)`: what each passes (exprs.py)
    abstract: bool = False  # its body only raises NotImplementedError
    # it reads `<batch>.spec_info.hidden_states` (method_facts.py DRAFT_READ, SGLang's): the hidden
    # states the engine's speculative worker hands a draft model from the target (roles.py)
    reads_spec_hidden: bool = False


@dataclass(frozen=True)
class WrapperAssign:
    line: int
    values: tuple[Ref, ...]


@dataclass
class ClassInfo:
    name: str  # qualified within the module: Outer.Inner for nested classes
    line: int
    column: int
    end_line: int
    bases: tuple[Ref, ...]
    methods: dict[str, FunctionInfo] = field(default_factory=dict)
    attrs: dict[str, tuple[int, tuple[Ref, ...]]] = field(default_factory=dict)
    # attribute name -> every `self.<attr> = value` in any method
    self_assigns: dict[str, list[WrapperAssign]] = field(default_factory=dict)
    # what `__getattr__` does with each name (forwarding.py), None without one
    getattr_forwards: Node | None = None
    decorators: tuple[str, ...] = ()
    header_keywords: bool = False  # `class W(Base, metaclass=M)`: a fix cannot append a base there
    body_line: int = 0  # first line of its first body statement (its decorators'): where a fix finds the indent


@dataclass
class ModuleSummary:
    path: str
    # every binding of a module-level name: classes and functions as Ref("class"/"function")
    names: dict[str, list[Ref]] = field(default_factory=dict)
    # a plain dict, or LazyClasses: top-level classes parsed when first asked for
    classes: MutableMapping[str, ClassInfo] = field(default_factory=dict)
    # a plain dict, or LazyFunctions: top-level functions parsed when first asked for
    functions: MutableMapping[str, FunctionInfo] = field(default_factory=dict)
    entry_classes: tuple[str, ...] = ()  # the names a literal `EntryClass` lists
    star_imports: tuple[str, ...] = ()  # modules of `from m import *`, in order
    all_names: tuple[str, ...] | None = None  # a literal `__all__`
    # class name -> (line, how, member name or "") for members added after its body: `setattr(C, ...)`, `C.x = ...`
    late_members: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    # what the module's `EntryClass` is made of, in order (served.py evaluates them): the value of
    # its last plain assignment, then what `EntryClass += ...` / `.append` / `.extend` add
    entry_refs: tuple[Ref, ...] = ()

    def classes_matching(self, pattern: re.Pattern[str] | None, subclasses: bool = False,
                         needles: tuple[str, ...] | None = None) -> list[ClassInfo]:
        """At least the classes whose text `pattern` finds (with `subclasses`, and those that
        name one of them as a base, in this file), in source order: a lazily parsed module
        parses only those (a class without the text cannot have what the caller looks for);
        classes already parsed come too. No pattern: every class. `needles`: strings of which
        every match of `pattern` holds one, found faster than the pattern is tried everywhere."""
        if pattern is not None and isinstance(self.classes, LazyClasses):
            return self.classes.parsed_matching(pattern, subclasses, needles)
        return list(self.classes.values())


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return decorators[0].lineno if decorators else stmt.lineno


def summarize(tree: ast.Module, source: str, path: str) -> ModuleSummary:
    """Summarise a parsed module. `source` is used for exact annotation/default text."""
    mod = ModuleSummary(path=path)
    _Summarizer(mod, source).module(tree)
    return mod


# -- lazily: the module's own statements now, each top-level class when first asked for --------
#
# Why: resolving `DeepseekV3ForCausalLM` needs deepseek_v2.py's imports, its module-level
# names and three of its classes, not the other 135 KB of attention and MoE classes;
# parsing and summarising every class of every file a resolution reaches was most of a
# cold check. The module is parsed with each undecorated top-level class body blanked
# out (its `class X` line becomes `class X: pass`: line numbers, bindings and their order
# stay), and a class is parsed alone, at its own lines, when a later stage asks for it.
# Where the text of a class cannot be told apart from its lines (a triple-quoted string or
# a backslash continuation running onto a line that starts at column 0), the class stays
# in the module's parse; anything unexpected falls back to parsing the whole file.

_CLASS_HEADER = re.compile(r"class[ \t]+(\w+)")
_WORDS = re.compile(r"\w+")
_DEF_HEADER = re.compile(r"(?:async[ \t]+)?def[ \t]+(\w+)")
# what may let a pattern match a class's text alone but not where it stands in the module (an
# anchor, \B or a lookaround at the text's edge); a `\b` there only adds matches, checked alone
_EDGES = re.compile(r"\^|\$|\\A|\\Z|\\B|\(\?<?[=!]")


def class_chunks(lines: list[str], starts: list[int] | None = None) -> list[tuple[str, int, int]]:
    """(name, first line, last line), 1-based, of each top-level class that can be parsed alone,
    from where lines start: a class runs to the next line that starts at column 0 with code."""
    return _chunks(lines, _CLASS_HEADER, code_at_0(lines) if starts is None else starts)


def function_chunks(lines: list[str], starts: list[int] | None = None) -> list[tuple[str, int, int]]:
    """The same for top-level functions (`def` or `async def` at column 0), undecorated."""
    return _chunks(lines, _DEF_HEADER, code_at_0(lines) if starts is None else starts)


def code_at_0(lines: list[str]) -> list[int]:
    """The 0-based indexes of the lines that start with code at column 0. A closing bracket at
    column 0 ends a bracket opened above it (`):` of a class header whose bases run over lines,
    as black writes it): it starts nothing."""
    return [i for i, line in enumerate(lines) if line[:1] not in (" ", "\t", "#", ")", "]", "}", "")
            and line.strip()]


def _chunks(lines: list[str], header_re: re.Pattern[str], starts: list[int]) -> list[tuple[str, int, int]]:
    chunks: list[tuple[str, int, int]] = []
    for k, i in enumerate(starts):
        header = header_re.match(lines[i])
        if header is None or (k and lines[starts[k - 1]].startswith("@")):
            continue  # not one, or a decorated one (its decorators are module statements here)
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        text = "".join(lines[i:end])
        # its last line of code (the header is one): found from the end, not by listing them all
        last = next(line for line in reversed(lines[i:end]) if line.strip() and not line.lstrip().startswith("#"))
        if text.count('"""') % 2 or text.count("'''") % 2 or last.rstrip().endswith("\\"):
            continue  # a string or a continuation may cross the next column-0 line
        chunks.append((header[1], i + 1, end))
    names = [name for name, _, _ in chunks]
    return [c for c in chunks if names.count(c[0]) == 1]  # a name bound twice: both parsed in place


def summarize_lazily(text: str, path: str) -> ModuleSummary | None:
    """The summary with its top-level classes and functions parsed on demand (LazyClasses,
    LazyFunctions); None when the module is better parsed whole (nothing to leave out, or the
    blanked parse disagrees)."""
    lines = split_lines(text)
    starts = code_at_0(lines)  # once, for the classes and the functions
    chunks = class_chunks(lines, starts)
    # a function that mentions `self` stays in the module's parse: a method written outside its
    # class (added after the body) or one that assigns what a wrapper holds, read with the module
    defs = [(name, first, last) for name, first, last in function_chunks(lines, starts)
            if not any("self" in line for line in lines[first - 1:last])]
    if not chunks and not defs:
        return None
    skeleton = list(lines)
    for kind, found in (("class", chunks), ("def", defs)):
        for name, first, last in found:
            skeleton[first - 1] = f"{kind} {name}{'()' if kind == 'def' else ''}: pass\n"
            skeleton[first:last] = ["\n"] * (last - first)
    try:
        tree = ast.parse("".join(skeleton), filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the whole file says why, or parses after all
    placeholders: dict[int, ast.ClassDef | ast.FunctionDef] = {
        n.lineno: n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    pending: dict[str, tuple[int, int]] = {}
    later: dict[str, tuple[int, int]] = {}
    kinds: tuple[tuple[list[tuple[str, int, int]], type, dict[str, tuple[int, int]]], ...] = (
        (chunks, ast.ClassDef, pending), (defs, ast.FunctionDef, later))
    for spans, node_type, into in kinds:
        for name, first, last in spans:
            node = placeholders.get(first)
            if node is None or not isinstance(node, node_type) or node.name != name or node.decorator_list \
                    or node.end_lineno != first:
                return None  # a `class`/`def` line that is not a statement (in a string): parse it whole
            into[name] = (first, last)
    if later and sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in later
                     for n in walk_local(tree.body)) != len(later):
        return None  # a function of the same name defined elsewhere too (under an `if`): whole
    mod = ModuleSummary(path=path)
    classes = LazyClasses({}, pending)
    classes.changed = True  # not in the cache yet
    mod.classes = classes
    mod.functions = LazyFunctions({}, later, classes)
    summarizer = _Summarizer(mod, text, lines)
    summarizer.module(tree, deferred={id(placeholders[first]) for first, _ in (*pending.values(), *later.values())})
    if any(info is not None and name.split(".")[0] in pending for name, info in classes.done.items()):
        return None  # a class of the same name bound elsewhere too (under an `if`): whole
    classes.bind(mod, lambda: text, summarizer.constants)
    classes.reuse(summarizer, lines)
    return mod


def mentions(mod: ModuleSummary, name: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The word `name`, or a module-level name bound to it (`from m import W as Alias`,
    `Alias = W`): what a class's text must have to subclass, build or name it. With the
    words, for `classes_matching`'s needles: found by `find`, where `re` would try a
    pattern that opens with `\\b` at every character of the module."""
    words = sorted({name} | {local for local, refs in mod.names.items()
                             if any(name in (r.name.rsplit(".", 1)[-1], r.attr) for r in refs)})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b"), tuple(words)


def _header(lines: list[str], first: int) -> str:
    """The `class X(...)` header at 1-based line `first`, up to its colon (bases may span lines)."""
    text = ""
    for line in lines[first - 1:first + 20]:
        text += line
        if ":" in line and text.count("(") <= text.count(")"):
            break
    return text


_V = TypeVar("_V")


class _Lazy(MutableMapping[str, _V]):
    """A mapping whose `pending` entries (name -> first, last line) are parsed on first lookup;
    iterating or counting parses them all. `done` keeps the order a whole parse makes: a
    pending entry holds its place with None."""

    done: dict[str, _V | None]
    pending: dict[str, tuple[int, int]]

    def _key(self, name: str) -> str:
        """The pending entry that holds `name`."""
        return name

    def _parse(self, name: str) -> None:
        raise NotImplementedError

    def get(self, name: str, default=None):
        found = self.done.get(name)
        if found is None and self.pending and self._key(name) in self.pending:
            self._parse(self._key(name))
            found = self.done.get(name)
        return default if found is None else found

    def __getitem__(self, name: str) -> _V:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __setitem__(self, name: str, info: _V) -> None:
        self.done[name] = info

    def hold(self, name: str) -> None:
        """Keep the place of an entry parsed later (pending), in the order a whole parse makes."""
        self.done[name] = None

    def __delitem__(self, name: str) -> None:
        self.get(name)
        del self.done[name]

    def parse_all(self) -> None:
        for name in list(self.pending):
            if name in self.pending:
                self._parse(name)

    def __iter__(self) -> Iterator[str]:
        self.parse_all()
        return iter([name for name, info in self.done.items() if info is not None])

    def __len__(self) -> int:
        self.parse_all()
        return sum(info is not None for info in self.done.values())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(done={list(self.done)}, pending={list(self.pending)})"

    def __eq__(self, other: object) -> bool:
        """Two lazy mappings are equal as data (parsed entries, pending lines); against any
        other mapping, once every entry is parsed."""
        if isinstance(other, type(self)):
            return self.done == other.done and self.pending == other.pending
        return super().__eq__(other)
    # unhashable, as dict: a class that defines __eq__ and no __hash__ gets `__hash__ = None`


def _lazy(mapping: MutableMapping[str, _V]) -> _Lazy[_V]:
    """A module's classes or functions where some are parsed later: only a lazily read module
    defers any (`lazy_summary`), and its mappings are lazy ones."""
    if not isinstance(mapping, _Lazy):
        raise TypeError(f"a deferred entry in a {type(mapping).__name__}, which parses nothing later")
    return mapping


class LazyClasses(_Lazy[ClassInfo]):
    """A module's classes, those still `pending` (name -> first, last line) parsed on first
    lookup; iterating or counting parses them all. `done` is in the order a whole parse makes:
    a pending class keeps its place with None, and its nested classes follow it once parsed."""

    def __init__(self, done: dict[str, ClassInfo | None], pending: dict[str, tuple[int, int]],
                 constants: dict[str, frozenset[str]] | None = None):
        self.done = done
        self.pending = pending
        self.constants = constants or {}
        self.changed = False  # classes were parsed since it was made or read from the cache
        self.error: str | None = None  # the file does not parse after all: why
        self._mod: ModuleSummary | None = None
        self._text: Callable[[], str] | None = None
        self._summarizer: _Summarizer | None = None
        self._lines: list[str] | None = None
        self._on_error: Callable[[str], None] | None = None
        # per pending class, what its header or text tells without parsing the class
        self._heads: dict[str, tuple[Ref, ...] | None] = {}
        self._texts: dict[str, str] = {}
        self._words: dict[str, frozenset[str]] = {}
        self._offsets: list[int] | None = None  # where each line of the text starts
        # the classes parsed alone in this run, for whoever reads one of their methods next
        # (analysis/sglang/owners.py): a method is then not parsed a second time
        self._trees: dict[str, ast.ClassDef] = {}

    def bind(self, mod: ModuleSummary, text: Callable[[], str],
             constants: dict[str, frozenset[str]] | None = None,
             on_error: Callable[[str], None] | None = None) -> None:
        """Where pending classes come from: the module's text, read when first needed; and
        who hears of it when the file turns out not to parse (a class nobody needed so far)."""
        self._mod, self._text = mod, text
        if constants is not None:
            self.constants = constants
        if on_error is not None:
            self._on_error = on_error

    def __getstate__(self) -> dict:
        """What a worker sends back (analysis/python/project.py `prefetch`): the classes and the
        lines of those still pending, not the text, the summariser or the callbacks, which
        the receiving project binds again."""
        state = dict(self.__dict__)
        for name in ("_mod", "_text", "_summarizer", "_lines", "_on_error"):
            state[name] = None
        state["_heads"], state["_texts"], state["_words"], state["_offsets"] = {}, {}, {}, None
        state["_trees"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def tree(self, name: str) -> ast.ClassDef | None:
        """The top-level class `name` as parsed alone in this run, at the file's line numbers."""
        return self._trees.get(name)

    def reuse(self, summarizer: _Summarizer, lines: list[str]) -> None:
        """The summariser and lines of the module's own parse: not made again per class."""
        self._summarizer, self._lines = summarizer, lines

    def _unparsed(self, name: str) -> bool:
        """`name` is a top-level class still pending, with the text to read it from."""
        return name in self.pending and self.done.get(name) is None and self._text is not None

    def pending_text(self, name: str) -> tuple[int, str] | None:
        """(first line, text) of a top-level class not parsed yet, for a reader that needs only
        the names it binds (served.py `sketch`, which takes its bases from `header_bases`);
        None once it is parsed."""
        if not self._unparsed(name):
            return None
        return self.pending[name][0], self._class_text(name)

    def lines(self) -> list[str] | None:
        """The module's lines (`split_lines` of its text), split once and shared with any reader
        of the file's lines, who must not change them; None before `bind`. SourceError where the
        text cannot be had."""
        return self._pending_lines() if self._text is not None else None

    def _pending_lines(self) -> list[str]:
        assert self._text is not None, "bind() before use"
        if self._lines is None:
            self._lines = split_lines(self._text())
        return self._lines

    def header_bases(self, name: str) -> tuple[Ref, ...] | None:
        """The bases of a top-level class not parsed yet, as its parse would give them
        (`ClassInfo.bases`), read from its header alone: what an MRO needs of each class it
        passes. None once it is parsed, or where the header does not parse alone."""
        if not self._unparsed(name):
            return None
        if name not in self._heads:
            node = None
            with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError, IndexError):
                node = ast.parse(_header(self._pending_lines(), self.pending[name][0]).strip() + "\n    pass\n").body[0]
            self._heads[name] = tuple(
                r for b in node.bases
                for r in expression_refs(b.value if isinstance(b, ast.Subscript) else b, None)) \
                if isinstance(node, ast.ClassDef) and node.name == name and not node.decorator_list else None
        return self._heads[name]

    def may_bind(self, name: str, word: str) -> bool:
        """False only where a top-level class not parsed yet cannot bind `word` (as a method,
        class attribute or import, or on `self`): its text lacks the word. A class body binds a
        name only where the name is written (a name set through a non-literal is `self.<?>`), so
        a class whose text lacks it is not parsed to learn so."""
        return not self._unparsed(name) or word in self._class_text(name)

    def may_define(self, name: str, method: str) -> bool:
        """False only where a top-level class not parsed yet cannot define `method`: a method is a
        `def` statement, and its text has none of that name."""
        return not self._unparsed(name) or Anchored(re.compile(rf"\bdef[\s\\]+{re.escape(method)}\b"), ("def",)).search(
            self._class_text(name)) is not None

    def _key(self, name: str) -> str:
        return name.split(".")[0]  # a nested class comes with its top-level one

    def parsed_matching(self, pattern: re.Pattern[str], subclasses: bool = False,
                        needles: tuple[str, ...] | None = None) -> list[ClassInfo]:
        """Parse the pending classes whose lines `pattern` finds (and, with `subclasses`, those
        whose header names a class so found, until none is left); every parsed class, in order."""
        if self.pending:
            assert self._text is not None, "bind() before use"
            lines = self._pending_lines()
            found = {name for name, info in self.done.items() if info is not None}
            todo = self._matching(pattern, needles)  # searched once: the rounds add subclasses
            while True:
                if subclasses and found:  # a header that names one (`\bName\b`): a word of it, or,
                    # for a name that is not one word (a nested class's `Outer.Inner`), searched for
                    dotted = [n for n in found if not _WORDS.fullmatch(n)]
                    bases = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(dotted))) + r")\b") \
                        if dotted else None
                    todo += [name for name, (first, _) in self.pending.items()
                             if name not in todo and (not found.isdisjoint(self._header_words(name, lines, first))
                                                      or bases is not None and bases.search(_header(lines, first)))]
                if not todo:
                    break
                for name in todo:
                    if name in self.pending:
                        self._parse(name)
                todo = []
                found = {name for name, info in self.done.items() if info is not None} - found
                if not subclasses:
                    break
        return [info for info in self.done.values() if info is not None]

    def _header_words(self, name: str, lines: list[str], first: int) -> frozenset[str]:
        """The words (`\\w+`) of a pending class's header, found once."""
        if name not in self._words:
            self._words[name] = frozenset(_WORDS.findall(_header(lines, first)))
        return self._words[name]

    def _class_text(self, name: str) -> str:
        if name not in self._texts:
            first, last = self.pending[name]
            self._texts[name] = "".join(self._pending_lines()[first - 1:last])
        return self._texts[name]

    def _matching(self, pattern: re.Pattern[str], needles: tuple[str, ...] | None = None) -> list[str]:
        """The pending classes whose text, searched alone, `pattern` finds, in file order. The
        module's text is scanned once, and a class is searched alone only where a match starts
        in it (with `needles`, where one of them occurs: every match holds one); a pattern that
        may read the edges of the text it is given (anchors, lookbehind) searches each class
        alone."""
        names = sorted(self.pending, key=lambda n: self.pending[n][0])
        if needles is not None:
            return self._holding(pattern, needles, names)
        if _EDGES.search(pattern.pattern):
            return [n for n in names if pattern.search(self._class_text(n))]
        assert self._text is not None, "bind() before use"
        text = self._text()
        starts, ends = self._spans(names)
        out, pos = [], 0
        while (m := pattern.search(text, pos)) is not None:
            i = bisect.bisect_right(starts, m.start()) - 1
            if i >= 0 and m.start() < ends[i]:
                if pattern.search(self._class_text(names[i])):
                    out.append(names[i])
                pos = ends[i]
            else:
                pos = m.start() + 1
        return out

    def _spans(self, names: list[str]) -> tuple[list[int], list[int]]:
        """Where each of `names` (pending, in file order) starts and ends in the module's text."""
        lines = self._pending_lines()
        if self._offsets is None or len(self._offsets) != len(lines) + 1:
            self._offsets = list(itertools.accumulate(map(len, lines), initial=0))
        offsets = self._offsets
        return [offsets[self.pending[n][0] - 1] for n in names], [offsets[self.pending[n][1]] for n in names]

    def _holding(self, pattern: re.Pattern[str], needles: tuple[str, ...], names: list[str]) -> list[str]:
        """_matching where every match of `pattern` holds one of `needles`: the classes where a
        needle occurs, each searched alone (a match inside a class's text holds its needle there)."""
        assert self._text is not None, "bind() before use"
        text = self._text()
        starts, ends = self._spans(names)
        hit: set[int] = set()
        for needle in needles:
            at = text.find(needle)
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                if i >= 0 and at < ends[i]:
                    hit.add(i)
                    at = text.find(needle, ends[i])
                else:
                    at = text.find(needle, at + 1)
        return [names[i] for i in sorted(hit) if pattern.search(self._class_text(names[i]))]

    # -- parsing -------------------------------------------------------------
    def alone(self, name: str, first: int, last: int, kinds: type | tuple[type, ...]) -> ast.AST | None:
        """The top-level statement `name` at lines first..last (a class, or a function of
        LazyFunctions), parsed alone at the file's own line numbers; where it does not parse
        alone as that statement, the whole file decides instead (`_whole`), and None."""
        assert self._mod is not None and self._text is not None, "bind() before use"
        lines = self._pending_lines()
        node = None
        with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
            tree = ast.parse("\n" * (first - 1) + "".join(lines[first - 1:last]), filename=self._mod.path)
            node = tree.body[0] if len(tree.body) == 1 else None
        self.changed = True
        if node is not None and isinstance(node, kinds) and getattr(node, "name", None) == name \
                and node.lineno == first:
            return node
        self._whole(self._text())
        return None

    def _parse(self, name: str) -> None:
        first, last = self.pending.pop(name)
        self._texts.pop(name, None)
        node = self.alone(name, first, last, ast.ClassDef)
        if not isinstance(node, ast.ClassDef):
            return
        self._trees[name] = node
        before = len(self.done)
        assert self._text is not None
        self.summarizer(self._text()).classdef(node, prefix="")
        inner = list(self.done)[before:]
        if inner:  # its nested classes go right after it, where a whole parse puts them
            order: dict[str, ClassInfo | None] = {}
            for key, info in self.done.items():
                if key not in inner:
                    order[key] = info
                if key == name:
                    order.update((k, self.done[k]) for k in inner)
            self.done = order

    def summarizer(self, text: str) -> _Summarizer:
        """The summariser of the module's own parse, or one made for its text (after the cache)."""
        if self._summarizer is None:
            assert self._mod is not None
            self._summarizer = _Summarizer(self._mod, text, self._lines)
            self._summarizer.constants = self.constants
        return self._summarizer

    def _whole(self, text: str) -> None:
        """A class that did not parse alone: the whole file decides, as if never lazy."""
        assert self._mod is not None
        self.pending = {}
        try:
            tree = ast.parse(text, filename=self._mod.path)
        except SyntaxError as exc:  # the reasons sources.parse_source gives
            self._fail(f"syntax error: {f'line {exc.lineno}: ' if exc.lineno else ''}{exc.msg}")
            return
        except (RecursionError, MemoryError):
            self._fail("code is nested too deeply to parse")
            return
        except ValueError as exc:
            self._fail(f"cannot parse: {exc}")
            return
        whole = summarize(tree, text, self._mod.path)
        for name in ("names", "entry_classes", "entry_refs", "star_imports", "all_names", "late_members"):
            setattr(self._mod, name, getattr(whole, name))
        if isinstance(self._mod.functions, LazyFunctions):  # the same mapping, now whole
            self._mod.functions.done, self._mod.functions.pending = dict(whole.functions), {}
        else:
            self._mod.functions = whole.functions
        self.done = dict(whole.classes)


    def _fail(self, why: str) -> None:
        """The file cannot be read after all: no class is left pending, and whoever bound
        this mapping hears why (the project then treats the file as unparsable)."""
        self.pending = {}
        self.error = why
        self.done = {name: info for name, info in self.done.items() if info is not None}
        functions = self._mod.functions if self._mod is not None else None
        if isinstance(functions, LazyFunctions):
            functions.pending = {}
            functions.done = {name: info for name, info in functions.done.items() if info is not None}
        if self._on_error is not None:
            self._on_error(why)


class LazyFunctions(_Lazy[FunctionInfo]):
    """A module's top-level functions, those still `pending` (name -> first, last line) parsed
    on first lookup, from the text, summariser and error handling of the module's LazyClasses
    (`classes`), which the project binds; iterating or counting parses them all. `done` keeps
    the order a whole parse makes: a pending function holds its place with None."""

    def __init__(self, done: dict[str, FunctionInfo | None], pending: dict[str, tuple[int, int]],
                 classes: LazyClasses | None = None):
        self.done = done
        self.pending = pending
        self.classes = classes

    def _parse(self, name: str) -> None:
        owner = self.classes
        assert owner is not None and owner._text is not None, "bind() before use"
        first, last = self.pending.pop(name)
        node = owner.alone(name, first, last, (ast.FunctionDef, ast.AsyncFunctionDef))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):  # else this mapping was made whole
            self.done[name] = owner.summarizer(owner._text()).function(node, _Body(node, node.name))


class _Body:
    """A function's statements, walked once; its local scope, built only if asked for."""

    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str = ""):
        self.fn, self.where = fn, where
        self.stmts = walk_local(fn.body)
        self._scope: Scope | None = None

    @property
    def scope(self) -> Scope:
        if self._scope is None:
            self._scope = Scope(self.fn, self.stmts, self.where)
        return self._scope


class _Summarizer:
    def __init__(self, mod: ModuleSummary, source: str, lines: list[str] | None = None):
        """`lines`: the source split already (`split_lines`), not split again."""
        self.mod = mod
        self.lines = SourceLines(source, lines)
        # the read through which a function here can take the target's hidden states off the
        # speculative batch, where the text has one
        read = DRAFT_READ.get()
        self.speculative = read if read is not None and read.holder in source and read.text.search(source) else None

    # -- expressions -> refs -------------------------------------------------
    @staticmethod
    def refs(node: ast.expr, scope: Scope | None) -> list[Ref]:
        return expression_refs(node, scope)

    # -- statements ----------------------------------------------------------
    def module(self, tree: ast.Module, deferred: set[int] | frozenset[int] = frozenset()) -> None:
        """`deferred`: ids of the `class X: pass` placeholders whose classes are parsed later."""
        self.constants = {t.id: v for n in tree.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)
                          for v in [string_set(n.value)] if v is not None}
        stmts = walk_local(tree.body)
        self.mod.late_members = late_members(stmts)
        for node in stmts:
            self.toplevel(node)
            if isinstance(node, ast.ClassDef) and id(node) in deferred:
                _lazy(self.mod.classes).hold(node.name)  # its place, until parsed
            elif isinstance(node, ast.FunctionDef) and id(node) in deferred:
                _lazy(self.mod.functions).hold(node.name)
            elif isinstance(node, ast.ClassDef):
                self.classdef(node, prefix="")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.mod.functions[node.name] = self.function(node, _Body(node, node.name))

    def bind(self, name: str, ref: Ref) -> None:
        self.mod.names.setdefault(name, []).append(ref)

    def toplevel(self, node: ast.AST) -> None:
        """Module-level bindings, also inside if/try/with blocks (import fallbacks)."""
        if isinstance(node, ast.ClassDef):
            self.bind(node.name, Ref("class", node.name))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.bind(node.name, Ref("function", node.name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for local, ref in import_bindings(node):
                self.bind(local, ref)
            star = star_module(node)
            if star is not None:
                self.mod.star_imports += (star,)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    names = string_set(node.value)
                    self.mod.all_names = tuple(sorted(names)) if names is not None else None
                if isinstance(target, ast.Name):
                    for ref in self.refs(node.value, None):
                        self.bind(target.id, ref)
                    if target.id == ENTRY:
                        self.mod.entry_classes = self.entry_names(node.value)
                        self.mod.entry_refs = tuple(_entry_refs(node.value, node.lineno))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == ENTRY \
                and isinstance(node.op, ast.Add):
            self.mod.entry_refs += tuple(_entry_refs(node.value, node.lineno))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and dotted(node.value.func) in (
                f"{ENTRY}.append", f"{ENTRY}.extend", f"{ENTRY}.insert") and node.value.args:
            call = node.value
            added = call.args[-1]
            if call.func.attr == "extend":  # type: ignore[attr-defined]
                self.mod.entry_refs += tuple(_entry_refs(added, node.lineno))
            else:  # one class
                self.mod.entry_refs += (Ref("seq", args=tuple(self.refs(added, None))),)

    @staticmethod
    def entry_names(value: ast.AST) -> tuple[str, ...]:
        elts = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        return tuple(d for d in (dotted(e) for e in elts) if d)

    def classdef(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = prefix + node.name
        info = ClassInfo(
            name=qualname,
            line=node.lineno,
            column=node.col_offset + 1,
            end_line=node.end_lineno or node.lineno,
            # `Base[Cfg]`, `Generic[T]`: the class is the subscripted one
            bases=tuple(r for b in node.bases for r in self.refs(b.value if isinstance(b, ast.Subscript) else b,
                                                                  None)),
            decorators=tuple(self.lines.segment(d) or "" for d in node.decorator_list),
            header_keywords=bool(node.keywords),
            body_line=_first_line(node.body[0]),
        )
        self.mod.classes[qualname] = info
        stmts = class_statements(node.body)  # also under class-body if/else/try/with, not TYPE_CHECKING
        constants = dict(self.constants)
        getattr_fn = None
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = _Body(stmt, f"{qualname}.{stmt.name}")
                fn = self.function(stmt, body)
                info.methods[stmt.name] = fn
                self.self_assigns(body, info)
                if fn.returns and any(d.rsplit(".", 1)[-1] in ACCESSORS for d in fn.decorators):
                    # `@property def language_model(self): return self._lm`: the instance's
                    # `language_model` is what the getter returns, as if assigned
                    info.self_assigns.setdefault(stmt.name, []).append(WrapperAssign(stmt.lineno, fn.returns))
                if stmt.name == "__getattr__":
                    getattr_fn = stmt
            elif isinstance(stmt, ast.ClassDef):
                self.classdef(stmt, prefix=f"{qualname}.")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    for name, value in _targets(target, stmt.value):
                        if not isinstance(name, ast.Name):
                            continue
                        info.attrs[name.id] = (stmt.lineno, tuple(self.refs(value, None)) if value else ())
                        texts = string_set(value) if value is not None else None
                        if texts is not None:
                            constants[name.id] = texts
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for local, ref in import_bindings(stmt):
                    info.attrs[local] = (stmt.lineno, (ref,))
        if getattr_fn is not None:
            info.getattr_forwards = compile_getattr(getattr_fn, constants)

    def self_assigns(self, body: _Body, info: ClassInfo) -> None:
        for node in body.stmts:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not any(
                    a.arg == "self" for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]):
                # a closure defined in the method: its `self` is the method's
                inner = _Body(node)
                for name, bound in body.scope.exprs.items():
                    inner.scope.exprs.setdefault(name, bound)
                self.self_assigns(inner, info)
                continue
            if isinstance(node, ast.Assign):
                pairs = [pair for t in node.targets for pair in _targets(t, node.value)]
            elif isinstance(node, ast.AnnAssign):
                pairs = [(node.target, node.value if node.value is not None else node.annotation)]
            elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                pairs = _set_by_call(node.value)
            else:
                continue
            for target, value in pairs:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    values = self.refs(value, body.scope) if value is not None else [
                        Ref("unknown", f"line {node.lineno}: unpacked from a value eaglelint cannot split")]
                    if isinstance(node, ast.AnnAssign) and node.value is not None:
                        # `self.lm: Cls = make()` -- the annotation names a candidate too
                        values += [Ref("call", args=(r,)) for r in self.refs(node.annotation, None)]
                    if isinstance(node, ast.AnnAssign) and node.value is None:
                        values = [Ref("call", args=(r,)) for r in values]
                    info.self_assigns.setdefault(target.attr, []).append(
                        WrapperAssign(node.lineno, tuple(values[:MAX_EXPANSION]))
                    )

    def function(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, body: _Body) -> FunctionInfo:
        params = self.params(fn.args)
        returns: list[Ref] = []
        returns_value = False
        for ret in body.stmts:
            if isinstance(ret, ast.Return) and ret.value is not None and not (
                isinstance(ret.value, ast.Constant) and ret.value.value is None
            ):
                returns_value = True
                returns.extend(self.refs(ret.value, body.scope))
        return FunctionInfo(
            name=fn.name,
            line=fn.lineno,
            params=params,
            returns_value=returns_value,
            returns=tuple(returns[:MAX_EXPANSION]),
            decorators=tuple(self.lines.segment(d) or "" for d in fn.decorator_list),
            return_annotation=self.lines.segment(fn.returns),
            is_async=isinstance(fn, ast.AsyncFunctionDef),
            adds_members=self.adds_members(fn, body),
            super_calls=super_calls(fn.name, body.stmts, lambda: body.scope), abstract=only_raises_not_implemented(fn),
            reads_spec_hidden=self.speculative is not None and reads_held(fn, self.speculative),
        )

    def adds_members(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, body: _Body) -> tuple[str, ...] | None:
        """members_added_to_argument(fn), without walking every expression of the function
        where the answer is plainly None (most methods; the walk was a fifth of summarising):
        none of its own statements returns its first parameter, or one returns something else."""
        params = [*fn.args.posonlyargs, *fn.args.args]
        own = [s for s in body.stmts if isinstance(s, ast.Return)]
        if not params or not own or not all(isinstance(s.value, ast.Name) and s.value.id == params[0].arg
                                            for s in own):
            return None
        return members_added_to_argument(fn)

    def params(self, a: ast.arguments) -> tuple[Param, ...]:
        out: list[Param] = []
        positional = [*a.posonlyargs, *a.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for i, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
            kind = "posonly" if i < len(a.posonlyargs) else "pos"
            out.append(self.param(arg, kind, default))
        if a.vararg is not None:
            out.append(self.param(a.vararg, "vararg", None))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
            out.append(self.param(arg, "kwonly", default))
        if a.kwarg is not None:
            out.append(self.param(a.kwarg, "varkw", None))
        return tuple(out)

    def param(self, arg: ast.arg, kind: str, default: ast.expr | None) -> Param:
        return Param(arg.arg, kind, self.lines.segment(arg.annotation), self.lines.segment(default))


def free_names_of_text(text: str, value: bool = False) -> set[str]:
    """Names an annotation (strings in it too: forward references) or, with `value`, a
    default value reads; {"<unparsable>"} for text that is not an expression."""
    try:
        node = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} if value else free_names(node)


def free_names(node: ast.AST) -> set[str]:
    """Names an expression reads; string annotations are parsed too ("torch.Tensor")."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            with contextlib.suppress(SyntaxError, ValueError, RecursionError):
                names |= free_names(ast.parse(sub.value, mode="eval"))
    return names


ENTRY = "EntryClass"  # the module attribute SGLang's model registry reads (models/registry.py)
ACCESSORS = ("property", "cached_property")  # a getter whose result the attribute of its name is
# calls that set an attribute of the object, as `self.<name> = value` does: torch's
# `self.add_module(name, module)` / `register_module`, `setattr(self, name, value)`, and
# `object.__setattr__(self, name, value)` / `nn.Module.__setattr__(...)` / `super().__setattr__(name, value)`
SETTERS = ("add_module", "register_module", "setattr", "__setattr__")


def _set_by_call(call: ast.Call) -> list[tuple]:
    """(`self.<name>` as an Attribute node, value) for a call that sets an attribute of `self`
    under a literal name; a name that is not a literal becomes `self.<?>` with the line, which
    held classes report as undecidable."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in SETTERS:
        return []
    args = list(call.args)
    on_self = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
    on_super = isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) \
        and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"
    if name == "setattr" and isinstance(func, ast.Name) or name == "__setattr__" and not (on_self or on_super):
        if not (args and isinstance(args[0], ast.Name) and args[0].id == "self"):
            return []
        args = args[1:]
    elif not (on_self or on_super):
        return []
    if len(args) != 2:
        return []
    key, value = args
    attr = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else \
        dynamic_attr(name, call.lineno)
    return [(ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=attr, ctx=ast.Store()), value)]


def _entry_refs(value: ast.expr, line: int) -> list[Ref]:
    """What an `EntryClass` value adds, for served.py: `[A, B]` and `[A] + OTHER` as their
    parts; a tuple as an unknown, since the registry takes anything but a list for one class
    (`entry.__name__`, which a tuple lacks: the registry's import fails); any other value (a
    class, a name bound to a list, an import, a helper's call) as its Refs."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _entry_refs(value.left, line) + _entry_refs(value.right, line)
    if isinstance(value, ast.Tuple):
        return [Ref("unknown", f"line {line}: EntryClass is a tuple, which SGLang's registry takes for one "
                               "class and fails on (a tuple has no __name__)")]
    return expression_refs(value, None)


def _targets(target: ast.AST, value: ast.AST | None) -> list[tuple]:
    """(target, value) pairs of one assignment target; a tuple target is paired element by
    element with a literal tuple of the same length, else each element gets None (unknown)."""
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [(target, value)]
    elts = target.elts
    values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elts) and not any(
        isinstance(e, ast.Starred) for e in [*elts, *value.elts]) else [None] * len(elts)
    return [pair for t, v in zip(elts, values, strict=True) for pair in _targets(t, v)]
