"""Cache entries as plain JSON data: what the cache writes, and a decoder that cannot run code.

Why not pickle: CI systems restore the cache folder from storage that a pull request
can write, and `pickle.load` of a crafted file runs code with the linter's rights.
JSON decoding builds only lists, dicts, strings and numbers; this module then builds
summaries and findings from them field by field, checking each type, so a crafted or
damaged entry is an `EntryError` (a cache miss), never code run or a wrong-typed field.

Layout: a header line naming the format and its version, then one JSON array
`[kind, ...]`. Dataclasses are stored as arrays of their fields in order (smaller and
faster than objects with keys); a `Ref` keeps its arguments inline, so a chain of n
attributes nests n levels, not 2n, and stays within the JSON encoder's depth.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...findings import WRITTEN_KINDS, CheckResult, Edit, Finding, Fix, ImportNeed, Written
from ...packs import load_codes
from ..syntax.directives import DIRECTIVE_KINDS, Directive, DirectiveScan

if TYPE_CHECKING:
    from types import ModuleType

HEADER = b"eaglelint-cache 9\n"  # bump the number when the layout below changes
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # an entry larger than this is not ours: refused unread


class EntryError(Exception):
    """Bytes that are not a cache entry this version wrote; str() says what is wrong."""


class SummaryLayout:
    """How a summary is laid out as entry data: the Python room's (python/summary_codec.py
    `encode_summary`, `decode_summary`), which this room sits below. analysis/__init__.py
    installs where it is; it is imported when a summary is first encoded or decoded (a warm
    run reads findings only)."""

    def __init__(self) -> None:
        self._source: Callable[[], ModuleType] | None = None
        self._layout: ModuleType | None = None

    def install(self, source: Callable[[], ModuleType]) -> None:
        self._source, self._layout = source, None

    def get(self) -> ModuleType:
        if self._layout is None:
            if self._source is None:
                raise ValueError("no summary layout installed")
            self._layout = self._source()
        return self._layout


SUMMARY_LAYOUT = SummaryLayout()


@dataclass(frozen=True)
class StatusMemo:
    """What a file's status said when its bytes had a digest: path -> (size, mtime_ns,
    ctime_ns, inode, digest). A warm run that finds the same status takes the digest
    without reading the file (analysis/python/project.py `unchanged_since`)."""

    entries: dict[str, tuple[int, int, int, int, str]]


def encode(value) -> bytes:
    """A summary, the reason a file could not be parsed, a run's (result, deps), a file's
    suppression directives, or a status memo."""
    body: list
    if isinstance(value, StatusMemo):
        body = ["status", {path: list(entry) for path, entry in value.entries.items()}]
    elif isinstance(value, DirectiveScan):
        body = ["directives", [[d.line, d.column, None if d.codes is None else list(d.codes), d.kind, d.own_line]
                               for d in value.directives], [list(span) for span in value.spans]]
    elif isinstance(value, tuple):
        result, deps = value
        body = ["run", [_finding(f) for f in result.findings], result.files_checked, [list(d) for d in deps]]
    elif isinstance(value, str):
        body = ["error", value]
    else:
        body = ["summary", SUMMARY_LAYOUT.get().encode_summary(value)]
    return HEADER + json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def decode(data: bytes):
    if not data.startswith(HEADER):
        raise EntryError("not an eaglelint cache entry of this format")
    try:
        body = json.loads(data[len(HEADER):])
    except (ValueError, RecursionError) as exc:
        raise EntryError(f"not valid JSON: {type(exc).__name__}") from None
    try:
        kind = body[0]
        if kind == "summary" and len(body) == 2:
            return SUMMARY_LAYOUT.get().decode_summary(body[1])
        if kind == "error" and len(body) == 2:
            return str_(body[1])
        if kind == "run" and len(body) == 4:
            return _load_run(body)
        if kind == "directives" and len(body) == 3:
            return _load_directives(body)
        if kind == "status" and len(body) == 2:
            return StatusMemo({str_(path): (int_(size), int_(mtime), int_(ctime), int_(inode), str_(digest))
                               for path, (size, mtime, ctime, inode, digest) in dict_(body[1]).items()})
    except (TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise EntryError(f"malformed {kind} entry: {type(exc).__name__}") from None
    raise EntryError("unknown entry kind")


# -- encoding ------------------------------------------------------------------------------------

def _finding(f) -> list:
    return [f.path, f.line, f.column, f.code, f.message, f.class_name, f.wrapped_class, f.method, f.wrapped_path,
            f.wrapped_line, f.provider_class, f.interface, f.wrapper_attribute, f.entry_class, list(f.subclasses),
            f.included_because, f.fix_refusal, _fix(f.fix), list(f.help), f.fix_title]


def _fix(fix: Fix | None) -> list | None:
    if fix is None:
        return None
    return [[[e.start, e.end, list(e.lines)] for e in fix.edits], [list(w) for w in fix.writes], fix.digest,
            [[n.module, n.name, n.asname] for n in fix.imports], [list(d) for d in fix.defines], fix.rank]


# -- decoding: every field's type is checked --------------------------------------------------------

def str_(v) -> str:
    if type(v) is not str:
        raise TypeError
    return v


def opt_str(v) -> str | None:
    return None if v is None else str_(v)


def int_(v) -> int:
    if type(v) is not int:
        raise TypeError
    return v


def opt_int(v) -> int | None:
    return None if v is None else int_(v)


def bool_(v) -> bool:
    if type(v) is not bool:
        raise TypeError
    return v


def list_(v) -> list:
    if type(v) is not list:
        raise TypeError
    return v


def dict_(v) -> dict:
    if type(v) is not dict:
        raise TypeError
    return v


def strs(v) -> tuple[str, ...]:
    return tuple(map(str_, list_(v)))


def _pair(v) -> tuple[str, str]:
    first, second = list_(v)
    return str_(first), str_(second)


def _written(v) -> Written:
    kind, class_name, name = list_(v)
    if str_(kind) not in WRITTEN_KINDS:
        raise TypeError
    return Written(kind, str_(class_name), str_(name))


def _load_fix(v) -> Fix | None:
    if v is None:
        return None
    edits, writes, digest, imports, defines, rank = list_(v)
    return Fix(tuple(Edit(int_(start), int_(end), strs(lines)) for start, end, lines in map(list_, list_(edits))),
               tuple(_written(w) for w in list_(writes)), str_(digest),
               tuple(ImportNeed(str_(m), opt_str(n), opt_str(a)) for m, n, a in map(list_, list_(imports))),
               tuple(map(_pair, list_(defines))), int_(rank))


def _load_run(body: list) -> tuple:
    known = load_codes()

    findings = []
    for row in map(list_, list_(body[1])):
        (path, line, column, code, message, class_name, wrapped_class, method, wrapped_path, wrapped_line,
         provider, interface, attribute, entry_class, subclasses, because, refusal, fix, help_lines,
         fix_title) = row
        if code not in known:
            raise ValueError
        findings.append(Finding(
            str_(path), int_(line), int_(column), str_(code), str_(message), str_(class_name),
            opt_str(wrapped_class), opt_str(method), opt_str(wrapped_path), opt_int(wrapped_line),
            opt_str(provider), opt_str(interface), opt_str(attribute), bool_(entry_class), strs(subclasses),
            opt_str(because), opt_str(refusal), _load_fix(fix), strs(help_lines), opt_str(fix_title)))
    deps = [(str_(p), str_(k)) for p, k in map(list_, list_(body[3]))]
    return CheckResult(findings, int_(body[2])), deps


def _load_directives(body: list) -> DirectiveScan:
    directives = []
    for line, column, codes, kind, own_line in map(list_, list_(body[1])):
        if kind not in DIRECTIVE_KINDS:
            raise ValueError
        directives.append(Directive(int_(line), int_(column), None if codes is None else strs(codes), kind,
                                    bool_(own_line)))
    spans = []
    for first, last in map(list_, list_(body[2])):
        spans.append((int_(first), int_(last)))
    return DirectiveScan(tuple(directives), tuple(spans))
