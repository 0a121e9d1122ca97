"""Wrappers found by what they hold, whatever the attribute's name.

Why: SGLang's engine calls the EAGLE-3 members on the model object whatever shape it
has; a class that holds its language model as `self.llm` (NVILA, POINTS, MiniCPM-O) or
a whole `*ForCausalLM` as `self.model` (DeepSeek-OCR, dots.ocr) fails at launch
exactly like one that holds it as `self.language_model`. So a class is a wrapper
candidate when it assigns `self.<attr> = X(...)` where X is a class that provides
members of the selected packs, and a language model with its own head; a bare decoder
(`self.model = Qwen2Model(...)` in an ordinary `*ForCausalLM`) makes an owner, not a
wrapper (checks/owner.py judges those).

How, cheaply (no second parse, no resolution of every class): the names of the
classes that define a member of the packs, and of their subclasses, are first taken
from the bytes of the scanned tree (class headers and `def <member>(` lines); a file is
parsed for this only if it assigns `self.<attr> = Name(...)` with such a name, or
`self.<attr> = self.<builder>(...)` with a builder of the same file that calls one.
What passes is then decided exactly: the attribute's value is resolved, and one of
the classes it may hold must provide a member and have a head.
"""

from __future__ import annotations

import bisect
import os
import re
from pathlib import Path

from ..python.discover import tree_files
from ..python.prefilter import SETTERS, dynamic_attr
from ..python.presence import has_member
from ..python.project import Project
from ..python.resolve import ClassEntity, Resolver
from ..python.summary import ClassInfo
from ..syntax.sources import SourceError
from ..syntax.textscan import Anchored
from .class_index import ClassIndex
from .owners import OwnerAnalysis, owner_analysis
from .roles import is_draft_name
from .served import EMBED_AND_HEAD, HEAD, LOGITS, is_served
from .wrappers import wrapped_candidates

_HEADS = (HEAD.encode(), LOGITS.encode(), EMBED_AND_HEAD.encode())
# possessive `++`/`*+`: what follows each never matches what it would give back, so the matches
# are those of the plain pattern, found without retrying every shorter split
_ASSIGN = re.compile(rb"self\.(?P<attr>\w++)[ \t]*+(?::[^=\n]*+)?=[ \t]*+(?P<callee>[\w.]++)\(")
# `self.add_module("llm", Qwen2ForCausalLM(...))`, `setattr(self, name, LM(...))`: the name, or the
# setter whose name argument is not a literal
_SET_CALL = Anchored(re.compile(rb"(?P<setter>add_module|register_module|setattr|__setattr__)[ \t]*\(\s*"
                                rb"(?:self\s*,\s*)?(?:[\"'](?P<attr>\w+)[\"']|[\w.]+)\s*,\s*(?P<callee>[\w.]+)\("),
                     SETTERS)
# `@property` / `@cached_property` getters: the attribute of their name is what they return
_GETTER = re.compile(rb"@(?:functools\.)?(?:property|cached_property)[ \t]*\n[ \t]*def[ \t]+(?P<attr>\w+)"
                     rb"[ \t]*\([ \t]*self[ \t]*\)")
# from a word's start (`\b`): a match that starts inside a word starts where the whole word does too
_CALLEE = re.compile(rb"\b(\w++)[ \t]*+\(")
# every NAME for which `def NAME(` occurs in the bytes (two such spans never overlap): one pass,
# where a test per assignment would search the whole file again
_DEF_NAME = re.compile(rb"def (\w*)\(")
# every NAME for which `\ndef NAME(` occurs (each holds one newline, at its start: none overlap)
_TOP_DEF = re.compile(rb"\ndef (\w+)\(")


class HeldIndex:
    """Which classes of the given files are language models that provide one of `members`,
    read from bytes; and which attributes of a file are assigned an instance of one.

    Over-approximates what holds_language_model then decides exactly: a class counts if
    it (or a base, by name) defines a member, and it (or a base) has a head by its text
    (`lm_head`, `logits_processor`, `get_embed_and_head`, or a `*ForCausalLM` name)."""

    def __init__(self, raws: dict[Path, bytes], members: tuple[str, ...], draft_members: tuple[str, ...] = ()):
        self.index = index = ClassIndex(raws)
        defines = {m: index.subclosure(_defining(index, m)) for m in members}
        headed = index.subclosure({n for path, raw in raws.items() for n, s, e in index.by_path.get(path, [])
                                   if n.endswith(b"ForCausalLM") or any(raw.find(h, s, e) >= 0 for h in _HEADS)})
        self.providers = frozenset(set().union(*defines.values()) & headed)
        self.draft_providers = frozenset(set().union(*(defines[m] for m in draft_members)) & headed)
        # drafts that define or inherit (by name) every draft-side member: nothing to ask of them
        self.complete_drafts = frozenset(set.intersection(*(defines[m] for m in draft_members))) \
            if draft_members else frozenset()
        self.any_provider = self.providers | self.draft_providers
        # classes of the given files seen assigning a provider to an attribute (attrs() notes them):
        # a class that holds one of these holds a language model two objects down (deep_attrs)
        self.holders: dict[bytes, None] = {}
        self._assigned: dict[Path, list[tuple[bytes, bytes]]] = {}  # per file: (attribute, callee), as attrs() read

    def attrs(self, path: Path, raw: bytes) -> tuple[str, ...]:
        """Attributes the file assigns a call of a provider class, or of a builder method
        (`self.llm = self.init_llm(...)`) whose body in this file calls one. In a draft
        class, only a provider of a draft-side member that the class does not define
        counts: the engine asks nothing else of a draft."""
        out: dict[str, None] = {}
        built: dict[bytes, set[bytes]] = {}
        setters = _SET_CALL.finditer(raw) if b"setattr" in raw or b"_module(" in raw else ()
        getters = _GETTER.finditer(raw) if b"property" in raw else ()
        defined = frozenset(_DEF_NAME.findall(raw))
        top: frozenset[bytes] | None = None  # the file's top-level functions, found once needed
        any_provider = self.any_provider
        assigns = list(_ASSIGN.finditer(raw))
        self._assigned[Path(path)] = [(m["attr"], m["callee"]) for m in assigns]
        for m in (*assigns, *setters, *getters):
            attr, callee = m["attr"], m.groupdict().get("callee")
            name = callee.rsplit(b".", 1)[-1] if callee else attr  # a getter: what its body calls
            # a builder method, or a factory function of this file
            builder = callee is None or callee.startswith(b"self.") or name not in any_provider and name in defined
            if not builder and name not in any_provider:
                continue  # most assignments: a layer, a config value
            if attr is None:  # a name set at run time: held under a name only its line can give
                attr = dynamic_attr(m["setter"].decode(), raw.count(b"\n", 0, m.start()) + 1).encode()
            elif attr.decode() in out:
                continue  # found already: another assignment of it adds nothing
            if builder:
                if name not in built:
                    if top is None:
                        top = _top_functions(raw)
                    built[name] = self._built(raw, name, top) if name in defined else set()
                held = built[name]
                if not held:
                    continue
            else:
                held = {name}  # a provider, called by name
            owner = next(((n, s, e) for n, s, e in self.index.by_path.get(Path(path), []) if s <= m.start() < e),
                         None)
            providers = self.providers
            if owner is not None and is_draft_name(owner[0].decode(), Path(path)):
                if owner[0] in self.complete_drafts:
                    continue
                providers = self.draft_providers
            if held & providers:
                out[attr.decode()] = None
                if owner is not None and owner[0] not in providers:
                    self.holders[owner[0]] = None
        return tuple(out)

    def every_attrs(self, raws: dict[Path, bytes]) -> list[tuple[Path, bytes, tuple[str, ...]]]:
        """Each file with its attrs(), and its deep_attrs() once every file has been read."""
        found = [(path, raw, self.attrs(path, raw)) for path, raw in raws.items()]
        if not self.holders:
            return found
        return [(path, raw, tuple(dict.fromkeys(attrs + self.deep_attrs(path, raw)))) for path, raw, attrs in found]

    def deep_attrs(self, path: Path, raw: bytes) -> tuple[str, ...]:
        """Attributes the file assigns a call of a holder class (one that attrs() found assigning a
        language model itself: dots.note.omni's `self.thinker`, whose `self.language_model` is
        the model). Call it once attrs() has read every given file; a file that names no holder
        is not searched."""
        assigned = self._assigned.get(Path(path))
        if assigned is None:  # a file attrs() has not read
            assigned = [(m["attr"], m["callee"]) for m in _ASSIGN.finditer(raw)]
        return tuple(dict.fromkeys(attr.decode() for attr, callee in assigned
                                   if callee.rsplit(b".", 1)[-1] in self.holders))

    def _built(self, raw: bytes, method: bytes, top: frozenset[bytes], depth: int = 0) -> set[bytes]:
        """The provider classes that the file's functions or methods named `method` call,
        directly or through a factory function of the file they call (two levels); `top`:
        the names of the file's top-level functions (`_TOP_DEF`)."""
        needle = b"def " + method + b"("
        out: set[bytes] = set()
        at = raw.find(needle)
        while at >= 0:
            end = min((e for e in (raw.find(b"\n    def ", at + 1), raw.find(b"\nclass ", at + 1),
                                   raw.find(b"\ndef ", at + 1)) if e >= 0), default=len(raw))
            for name in set(_CALLEE.findall(raw, at + len(needle), end)):
                if name in self.any_provider:
                    out.add(name)
                elif depth < 2 and name != method and name in top:
                    out |= self._built(raw, name, top, depth + 1)
            at = raw.find(needle, at + 1)
        return out


def _top_functions(raw: bytes) -> frozenset[bytes]:
    """`_TOP_DEF.findall(raw)`, matched only where `bytes.find` finds its opening (a file has
    few top-level functions; `re` would look for the newline at every character)."""
    out = set()
    at = raw.find(b"\ndef ")
    while at >= 0:
        found = _TOP_DEF.match(raw, at)
        if found:
            out.add(found[1])
        at = raw.find(b"\ndef ", at + 1)
    return frozenset(out)


def _defining(index: ClassIndex, member: str) -> set[bytes]:
    """Top-level classes whose body defines `member` (or binds it per instance)."""
    found: set[bytes] = set()
    for needle in (b"def " + member.encode() + b"(", b"self." + member.encode() + b" ="):
        for path, raw in index.raws.items():
            at = raw.find(needle)
            if at < 0:
                continue
            spans = index.by_path.get(path, [])
            starts = [s for _, s, _ in spans]  # in file order, none overlapping: one holds `at`, or none
            while at >= 0:
                i = bisect.bisect_right(starts, at) - 1
                if i >= 0 and at < spans[i][2]:
                    found.add(spans[i][0])
                at = raw.find(needle, at + 1)
    return found


def holds_language_model(resolver: Resolver, cls: ClassEntity, attr: str, members: tuple[str, ...]) -> bool:
    """`self.<attr>` may hold a class that provides one of `members` and has a head of its own
    (a language model such as a `*ForCausalLM`), not a bare decoder."""
    memo: dict[tuple, bool] = resolver.memos.setdefault("held.holds", {})  # asked again for each subclass
    key = (cls, attr, members)
    if key not in memo:
        classes, _ = wrapped_candidates(resolver, cls, attr)
        analysis = owner_analysis(resolver)
        memo[key] = any(any(has_member(resolver, c, m) for m in members) and _has_head(resolver, analysis, c)
                        for c in classes)
    return memo[key]


def holds_held_model(resolver: Resolver, cls: ClassEntity, attr: str, members: tuple[str, ...]) -> bool:
    """`self.<attr>` may hold a class that is no language model itself but holds one in turn (a
    thinker whose `self.language_model` is the model): the engine's calls reach that model only
    through cls, so cls is its wrapper. A held class that is served itself is left out: it gets
    the members as a wrapper of its own, and cls then delegates to it."""
    classes, _ = wrapped_candidates(resolver, cls, attr)
    analysis = owner_analysis(resolver)
    for held in classes:
        if _has_head(resolver, analysis, held) or is_served(resolver, held):
            continue
        inner = dict.fromkeys(a for c in resolver.mro(held) for a in resolver.info(c).self_assigns)
        if any(a != attr and holds_language_model(resolver, held, a, members) for a in inner):
            return True
    return False


def _has_head(resolver: Resolver, analysis: OwnerAnalysis, cls: ClassEntity) -> bool:
    """A language model: a `*ForCausalLM`, or a class that owns `lm_head` or gives out its
    embedding and head. A decoder (Qwen2MoeModel, which defines the EAGLE-3 setter) has none;
    one named `*ForCausalLM` still counts here (0.5.22's qwen3_5.Qwen3_5ForCausalLM, held as
    MiniCPMV4_6's llm: the members rule writes its capture member as an owner does)."""
    return analysis.is_full_model(cls) or cls.qualname.endswith("ForCausalLM") \
        or has_member(resolver, cls, EMBED_AND_HEAD) \
        or any(resolver.assigns(c, HEAD) for c in resolver.mro(cls))


def held_wrapper(resolver: Resolver, cls: ClassEntity, info: ClassInfo, by_name: tuple[str, ...],
                 held: tuple[str, ...], members: tuple[str, ...]) -> str | None:
    """The attribute that makes `cls` a wrapper: the first of `by_name` it assigns (whatever
    the value), else the first of the `held` candidates whose value is a language model."""
    attr = next((a for a in by_name if a in info.self_assigns), None)
    if attr is None:
        attr = next((a for a in held if a in info.self_assigns
                     and holds_language_model(resolver, cls, a, members)), None)
    if attr is None:
        attr = next((a for a in held if a in info.self_assigns
                     and holds_held_model(resolver, cls, a, members)), None)
    if attr is None:
        # (not an attribute held by name: its base is a wrapper whatever it holds, and judges them)
        attr = next((a for a in held if a not in by_name and _chosen_here(resolver, cls, a, members)), None)
    return attr


def _chosen_here(resolver: Resolver, cls: ClassEntity, attr: str, members: tuple[str, ...]) -> bool:
    """A base assigns `self.<attr>` through a builder it leaves abstract (minicpmv.py's
    `self.llm = self.init_llm(...)`), so the base is no wrapper, and each subclass that
    overrides the builder with a language model is one, judged on its own choice."""
    mro = resolver.mro(cls)
    at = next((i for i, c in enumerate(mro) if i and resolver.assigns(c, attr)), None)
    if at is None or holds_language_model(resolver, mro[at], attr, members) \
            or not holds_language_model(resolver, cls, attr, members):
        return False
    # a subclass of one that is judged so (MiniCPMV4_7 of MiniCPMV4_6) is named in its finding,
    # or judged there on its own choice
    return not any(holds_language_model(resolver, mid, attr, members) for mid in mro[1:at])


def tree_raws(project: Project, raws: dict[Path, bytes]) -> dict[Path, bytes]:
    """`raws`, and the bytes of the other files of their `models` folders: a file checked
    alone (pre-commit) may hold a class that only its tree says is a language model.
    They are noted as read, so that a cached run sees a change to them."""
    out = dict(raws)
    given = {Path(os.path.abspath(p)) for p in raws}
    for path in tree_files(given):
        if path not in given:
            try:
                out[path] = project.raw(path)
            except SourceError:
                continue
    return out
