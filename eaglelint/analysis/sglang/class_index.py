"""Top-level class headers of the scanned files, found from their bytes: what the rules'
bytes tests look up before anything is parsed (which classes a file defines, their bases,
where each body lies, and which names any file registers in SGLang's `EntryClass`).
"""

from __future__ import annotations

import re
from pathlib import Path

_HEADER = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?", re.M)
_WORD = re.compile(rb"\w+")


def _headers(raw: bytes) -> list[re.Match[bytes]]:
    """Top-level `class` lines, found with bytes.find (a multi-line regular expression
    anchored at every line costs more than the rest of the rule's bytes tests)."""
    starts = [0] if raw.startswith(b"class") else []
    at = raw.find(b"\nclass")
    while at >= 0:
        starts.append(at + 1)
        at = raw.find(b"\nclass", at + 1)
    return [m for m in (_HEADER.match(raw, s) for s in starts) if m]


class ClassIndex:
    """Top-level class headers of the given files (name, bases, where the body lies), found
    in one pass: what the bytes tests and the registry look up."""

    def __init__(self, raws: dict[Path, bytes]):
        self.raws = raws
        self.by_path: dict[Path, list[tuple[bytes, int, int]]] = {}
        self.bodies: dict[bytes, list[tuple[Path, int, int]]] = {}
        self.subclasses: dict[bytes, list[tuple[bytes, Path]]] = {}
        self._registered: frozenset[bytes] | None = None
        for path, raw in raws.items():
            found = _headers(raw)
            ends = [f.start() for f in found[1:]] + [len(raw)] if found else []
            for m, end in zip(found, ends, strict=True):
                self.by_path.setdefault(path, []).append((m.group(1), m.start(), end))
                self.bodies.setdefault(m.group(1), []).append((path, m.start(), end))
                for base in set(_WORD.findall(m.group(2) or b"")):
                    self.subclasses.setdefault(base, []).append((m.group(1), path))

    def subclosure(self, names: set[bytes]) -> set[bytes]:
        """`names` and every class that names one of them among its bases, transitively."""
        found, todo = set(names), list(names)
        while todo:
            for sub, _ in self.subclasses.get(todo.pop(), []):
                if sub not in found:
                    found.add(sub)
                    todo.append(sub)
        return found

    def registered_anywhere(self) -> frozenset[bytes]:
        """The words after `EntryClass` in any of the files (found once): a class defined in one
        file (a subpackage's module) may be registered by another (`EntryClass += [Cls]`)."""
        if self._registered is None:
            words: set[bytes] = set()
            for raw in self.raws.values():
                at = raw.find(b"EntryClass")
                if at >= 0:
                    words.update(_WORD.findall(raw, at))
            self._registered = frozenset(words)
        return self._registered

    def body(self, name: bytes, path: Path | None = None) -> bytes | None:
        """The body of class `name` in `path`, or in the one file that defines it."""
        places = [p for p in self.bodies.get(name, []) if path is None or p[0] == path]
        if len(places) != 1:
            return None
        where, start, end = places[0]
        return self.raws[where][start:end]
