"""Wrappers found by what they hold, whatever the attribute's name.

Why: SGLang's engine calls the EAGLE-3 members on the model object whatever shape it
has; a class that holds its language model as `self.llm` (NVILA, POINTS, MiniCPM-O) or
a whole `*ForCausalLM` as `self.model` (DeepSeek-OCR, dots.ocr) fails at launch
exactly like one that holds it as `self.language_model`. So a class is a wrapper
candidate when it assigns `self.<attr> = X(...)` where X is a class that provides
members of the selected packs, and a language model with its own head; a bare decoder
(`self.model = Qwen2Model(...)` in an ordinary `*ForCausalLM`) makes an owner, not a
wrapper (owner_rules.py judges those).

How, cheaply (no second parse, no resolution of every class): the names of the
classes that define a member of the packs, and of their subclasses, are first taken
from the bytes of the scanned tree (class headers and `def <member>(` lines); a file is
parsed for this only if it assigns `self.<attr> = Name(...)` with such a name, or
`self.<attr> = self.<builder>(...)` with a builder of the same file that calls one.
What passes is then decided exactly: the attribute's value is resolved, and one of
the classes it may hold must provide a member and have a head.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .dependents import tree_files
from .members import has_member
from .modules import Project
from .owner_rules import ClassIndex
from .owners import HEAD, OwnerAnalysis
from .resolve import ClassEntity, Resolver
from .sources import SourceError, read_bytes
from .summary import ClassInfo
from .wrapper_check import wrapped_candidates

EMBED_AND_HEAD = "get_embed_and_head"
_ASSIGN = re.compile(rb"self\.(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*([\w.]+)\(")
_CALLEE = re.compile(rb"(\w+)[ \t]*\(")


class HeldIndex:
    """Which classes of the given files provide one of `members`, read from bytes; and
    which attributes of a file are assigned an instance of one."""

    def __init__(self, raws: dict[Path, bytes], members: tuple[str, ...]):
        index = ClassIndex(raws)
        found: set[bytes] = set()
        for path, raw in raws.items():
            for member in members:
                needle = b"def " + member.encode() + b"("
                at = raw.find(needle)
                while at >= 0:
                    found.update(n for n, s, e in index.by_path.get(path, []) if s <= at < e)
                    at = raw.find(needle, at + 1)
        todo = list(found)
        while todo:  # subclasses inherit the members (by name: exact resolution comes later)
            for sub, _ in index.subclasses.get(todo.pop(), []):
                if sub not in found:
                    found.add(sub)
                    todo.append(sub)
        self.providers = frozenset(found)

    def attrs(self, raw: bytes) -> tuple[str, ...]:
        """Attributes the file assigns a call of a provider class, or of a builder method
        (`self.llm = self.init_llm(...)`) whose body in this file calls one."""
        out: dict[str, None] = {}
        for attr, callee in _ASSIGN.findall(raw):
            name = callee.rsplit(b".", 1)[-1]
            if name in self.providers or (callee.startswith(b"self.") and self._builds(raw, name)):
                out[attr.decode()] = None
        return tuple(out)

    def _builds(self, raw: bytes, method: bytes) -> bool:
        needle = b"def " + method + b"("
        at = raw.find(needle)
        while at >= 0:
            end = min((e for e in (raw.find(b"\n    def ", at + 1), raw.find(b"\nclass ", at + 1)) if e >= 0),
                      default=len(raw))
            if any(n in self.providers for n in _CALLEE.findall(raw, at + len(needle), end)):
                return True
            at = raw.find(needle, at + 1)
        return False


def holds_language_model(resolver: Resolver, cls: ClassEntity, attr: str, members: tuple[str, ...]) -> bool:
    """`self.<attr>` may hold a class that provides one of `members` and has a head of its own
    (a language model such as a `*ForCausalLM`), not a bare decoder."""
    classes, _ = wrapped_candidates(resolver, cls, attr)
    analysis = OwnerAnalysis(resolver)
    return any(any(has_member(resolver, c, m) for m in members) and _has_head(resolver, analysis, c)
               for c in classes)


def _has_head(resolver: Resolver, analysis: OwnerAnalysis, cls: ClassEntity) -> bool:
    """A language model: a `*ForCausalLM`, or a class that owns `lm_head` or gives out its
    embedding and head. A decoder (Qwen2MoeModel, which defines the EAGLE-3 setter) has none."""
    return analysis.is_full_model(cls) or has_member(resolver, cls, EMBED_AND_HEAD) \
        or any(HEAD in resolver.info(c).self_assigns for c in resolver.mro(cls))


def held_wrapper(resolver: Resolver, cls: ClassEntity, info: ClassInfo, by_name: tuple[str, ...],
                 held: tuple[str, ...], members: tuple[str, ...]) -> str | None:
    """The attribute that makes `cls` a wrapper: the first of `by_name` it assigns (whatever
    the value), else the first of the `held` candidates whose value is a language model."""
    attr = next((a for a in by_name if a in info.self_assigns), None)
    if attr is None:
        attr = next((a for a in held if a in info.self_assigns
                     and holds_language_model(resolver, cls, a, members)), None)
    return attr


def tree_raws(project: Project, raws: dict[Path, bytes]) -> dict[Path, bytes]:
    """`raws`, and the bytes of the other files of their `models` folders: a file checked
    alone (pre-commit) may hold a class that only its tree says is a language model.
    They are noted as read, so that a cached run sees a change to them."""
    out = dict(raws)
    given = {Path(os.path.abspath(p)) for p in raws}
    for path in tree_files(given):
        if path not in given:
            try:
                out[path] = read_bytes(path, project.max_file_size)
            except SourceError:
                continue
            project.note_read(path, out[path])
    return out
