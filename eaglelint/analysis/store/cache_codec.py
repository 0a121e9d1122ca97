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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...findings import CheckResult, Edit, Finding, Fix, ImportNeed
from ...packs import load_codes
from ..syntax.directives import DIRECTIVE_KINDS, Directive, DirectiveScan

if TYPE_CHECKING:  # imported where a summary is encoded or decoded: a warm run reads findings only
    from collections.abc import MutableMapping

    from ..python.summary import ClassInfo, FunctionInfo, ModuleSummary
    from ..syntax.refs import Ref

HEADER = b"eaglelint-cache 6\n"  # bump the number when the layout below changes
MAX_ENTRY_BYTES = 64 * 1024 * 1024  # an entry larger than this is not ours: refused unread


class EntryError(Exception):
    """Bytes that are not a cache entry this version wrote; str() says what is wrong."""


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
        body = ["summary", _summary(value)]
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
            return _load_summary(body[1])
        if kind == "error" and len(body) == 2:
            return _str(body[1])
        if kind == "run" and len(body) == 4:
            return _load_run(body)
        if kind == "directives" and len(body) == 3:
            return _load_directives(body)
        if kind == "status" and len(body) == 2:
            return StatusMemo({_str(path): (_int(size), _int(mtime), _int(ctime), _int(inode), _str(digest))
                               for path, (size, mtime, ctime, inode, digest) in _dict(body[1]).items()})
    except (TypeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise EntryError(f"malformed {kind} entry: {type(exc).__name__}") from None
    raise EntryError("unknown entry kind")


# -- encoding ------------------------------------------------------------------------------------

def _ref(r: Ref) -> list:
    return [r.kind, r.name, r.attr, *map(_ref, r.args)]


def _refs(refs) -> list:
    return [_ref(r) for r in refs]


def _function(f: FunctionInfo) -> list:
    return [f.name, f.line, [[p.name, p.kind, p.annotation, p.default] for p in f.params], f.returns_value,
            _refs(f.returns), list(f.decorators), f.return_annotation, f.is_async,
            None if f.adds_members is None else list(f.adds_members), _refs(f.super_calls), f.abstract,
            f.reads_spec_hidden]


def _node(v):
    """A `__getattr__` decision tree (forwarding.py): tuples of strings, string sets, None."""
    if isinstance(v, tuple):
        return [_node(x) for x in v]
    if isinstance(v, frozenset):
        return {"set": sorted(v)}
    return v


def _class(c: ClassInfo) -> list:
    return [c.name, c.line, c.column, c.end_line, _refs(c.bases),
            {name: _function(f) for name, f in c.methods.items()},
            {name: [line, _refs(refs)] for name, (line, refs) in c.attrs.items()},
            {name: [[a.line, _refs(a.values)] for a in assigns] for name, assigns in c.self_assigns.items()},
            _node(c.getattr_forwards), list(c.decorators), c.header_keywords, c.body_line]


def _classes(classes, functions_pending: bool = False) -> dict | list:
    """A dict of classes; a lazily parsed module's as [[name, class or None (pending)], ...],
    its pending classes' lines and its constants, so that a later run parses only what it needs
    (kept so too while any of its functions is pending: they are parsed through it)."""
    from ..python.summary import LazyClasses

    if not isinstance(classes, LazyClasses) or not classes.pending and not functions_pending:
        return {name: _class(c) for name, c in classes.items()}
    return [[[name, None if c is None else _class(c)] for name, c in classes.done.items()],
            [[name, first, last] for name, (first, last) in classes.pending.items()],
            {name: sorted(values) for name, values in classes.constants.items()}]


def _functions(functions) -> dict | list:
    """A dict of functions; a lazily parsed module's with pending ones as [[name, function or
    None (pending)], ...] and their lines."""
    from ..python.summary import LazyFunctions

    if not isinstance(functions, LazyFunctions) or not functions.pending:
        return {name: _function(f) for name, f in functions.items()}
    return [[[name, None if f is None else _function(f)] for name, f in functions.done.items()],
            [[name, first, last] for name, (first, last) in functions.pending.items()]]


def _summary(m: ModuleSummary) -> list:
    functions = _functions(m.functions)
    return [m.path, {name: _refs(refs) for name, refs in m.names.items()},
            _classes(m.classes, isinstance(functions, list)),
            functions, list(m.entry_classes), list(m.star_imports),
            None if m.all_names is None else list(m.all_names),
            {name: [list(x) for x in added] for name, added in m.late_members.items()}, _refs(m.entry_refs)]


def _finding(f) -> list:
    return [f.path, f.line, f.column, f.code, f.message, f.class_name, f.wrapped_class, f.method, f.wrapped_path,
            f.wrapped_line, f.provider_class, f.interface, f.wrapper_attribute, f.entry_class, list(f.subclasses),
            f.included_because, f.every_candidate, f.fix_refusal, _fix(f.fix)]


def _fix(fix: Fix | None) -> list | None:
    if fix is None:
        return None
    return [[[e.start, e.end, list(e.lines)] for e in fix.edits], list(fix.added), fix.digest,
            [[n.module, n.name, n.asname] for n in fix.imports], [list(d) for d in fix.defines], fix.rank]


# -- decoding: every field's type is checked --------------------------------------------------------

def _str(v) -> str:
    if type(v) is not str:
        raise TypeError
    return v


def _opt_str(v) -> str | None:
    return None if v is None else _str(v)


def _int(v) -> int:
    if type(v) is not int:
        raise TypeError
    return v


def _opt_int(v) -> int | None:
    return None if v is None else _int(v)


def _bool(v) -> bool:
    if type(v) is not bool:
        raise TypeError
    return v


def _list(v) -> list:
    if type(v) is not list:
        raise TypeError
    return v


def _dict(v) -> dict:
    if type(v) is not dict:
        raise TypeError
    return v


def _strs(v) -> tuple[str, ...]:
    return tuple(map(_str, _list(v)))


def _load_node(v):
    if type(v) is list:
        return tuple(map(_load_node, v))
    if type(v) is dict:
        if set(v) != {"set"}:
            raise ValueError
        return frozenset(_strs(v["set"]))
    if v is None or type(v) is str:
        return v
    raise TypeError


def _load_summary(v) -> ModuleSummary:
    """The loaders close over summary.py's classes, imported here on first use."""
    from ..python.summary import (
        ClassInfo,
        FunctionInfo,
        LazyClasses,
        LazyFunctions,
        ModuleSummary,
        Param,
        WrapperAssign,
    )
    from ..syntax.refs import Ref

    def load_ref(v) -> Ref:
        kind, name, attr, *args = _list(v)
        return Ref(_str(kind), _str(name), _str(attr), tuple(map(load_ref, args)))

    def load_refs(v) -> tuple[Ref, ...]:
        return tuple(map(load_ref, _list(v)))

    def load_function(v) -> FunctionInfo:
        name, line, params, returns_value, returns, decorators, annotation, is_async, adds, supers, \
            abstract, spec_hidden = _list(v)
        return FunctionInfo(
            _str(name), _int(line),
            tuple(Param(_str(n), _str(k), _opt_str(a), _opt_str(d)) for n, k, a, d in map(_list, _list(params))),
            _bool(returns_value), load_refs(returns), _strs(decorators), _opt_str(annotation), _bool(is_async),
            None if adds is None else _strs(adds), load_refs(supers), _bool(abstract), _bool(spec_hidden))

    def load_class(v) -> ClassInfo:
        name, line, column, end_line, bases, methods, attrs, assigns, forwards, decorators, keywords, body = _list(v)
        return ClassInfo(
            _str(name), _int(line), _int(column), _int(end_line), load_refs(bases),
            {_str(k): load_function(f) for k, f in _dict(methods).items()},
            {_str(k): (_int(line), load_refs(refs)) for k, (line, refs) in _dict(attrs).items()},
            {_str(k): [WrapperAssign(_int(line), load_refs(refs)) for line, refs in map(_list, _list(items))]
             for k, items in _dict(assigns).items()},
            _load_node(forwards), _strs(decorators), _bool(keywords), _int(body))

    def load_classes(v) -> MutableMapping[str, ClassInfo]:
        if not isinstance(v, list):
            return {_str(k): load_class(c) for k, c in _dict(v).items()}
        done, pending, constants = _list(v)
        return LazyClasses({_str(name): None if c is None else load_class(c) for name, c in map(_list, _list(done))},
                           {_str(name): (_int(first), _int(last)) for name, first, last in map(_list, _list(pending))},
                           {_str(k): frozenset(_strs(values)) for k, values in _dict(constants).items()})

    def load_functions(v, classes) -> MutableMapping[str, FunctionInfo]:
        if not isinstance(v, list):
            return {_str(k): load_function(f) for k, f in _dict(v).items()}
        if not isinstance(classes, LazyClasses):
            raise ValueError("pending functions without lazily parsed classes")
        done, pending = _list(v)
        return LazyFunctions(
            {_str(name): None if f is None else load_function(f) for name, f in map(_list, _list(done))},
            {_str(name): (_int(first), _int(last)) for name, first, last in map(_list, _list(pending))}, classes)

    path, names, classes, functions, entry_classes, stars, all_names, late, entry_refs = _list(v)
    loaded_classes = load_classes(classes)
    return ModuleSummary(
        _str(path), {_str(k): list(load_refs(refs)) for k, refs in _dict(names).items()},
        loaded_classes,
        load_functions(functions, loaded_classes), _strs(entry_classes), _strs(stars),
        None if all_names is None else _strs(all_names),
        {_str(k): [(_int(line), _str(how), _str(member)) for line, how, member in map(_list, _list(added))]
         for k, added in _dict(late).items()}, load_refs(entry_refs))


def _pair(v) -> tuple[str, str]:
    first, second = _list(v)
    return _str(first), _str(second)


def _load_fix(v) -> Fix | None:
    if v is None:
        return None
    edits, added, digest, imports, defines, rank = _list(v)
    return Fix(tuple(Edit(_int(start), _int(end), _strs(lines)) for start, end, lines in map(_list, _list(edits))),
               _pair(added), _str(digest),
               tuple(ImportNeed(_str(m), _opt_str(n), _opt_str(a)) for m, n, a in map(_list, _list(imports))),
               tuple(map(_pair, _list(defines))), _int(rank))


def _load_run(body: list) -> tuple:
    known = load_codes()

    findings = []
    for row in map(_list, _list(body[1])):
        (path, line, column, code, message, class_name, wrapped_class, method, wrapped_path, wrapped_line,
         provider, interface, attribute, entry_class, subclasses, because, every, refusal, fix) = row
        if code not in known:
            raise ValueError
        findings.append(Finding(
            _str(path), _int(line), _int(column), _str(code), _str(message), _str(class_name),
            _opt_str(wrapped_class), _opt_str(method), _opt_str(wrapped_path), _opt_int(wrapped_line),
            _opt_str(provider), _opt_str(interface), _opt_str(attribute), _bool(entry_class), _strs(subclasses),
            _opt_str(because), _bool(every), _opt_str(refusal), _load_fix(fix)))
    deps = [(_str(p), _str(k)) for p, k in map(_list, _list(body[3]))]
    return CheckResult(findings, _int(body[2])), deps


def _load_directives(body: list) -> DirectiveScan:
    directives = []
    for line, column, codes, kind, own_line in map(_list, _list(body[1])):
        if kind not in DIRECTIVE_KINDS:
            raise ValueError
        directives.append(Directive(_int(line), _int(column), None if codes is None else _strs(codes), kind,
                                    _bool(own_line)))
    spans = []
    for first, last in map(_list, _list(body[2])):
        spans.append((_int(first), _int(last)))
    return DirectiveScan(tuple(directives), tuple(spans))
