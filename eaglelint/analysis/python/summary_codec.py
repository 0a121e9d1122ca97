"""A summary as cache entry data: the layout of the store's `summary` entries
(store/cache_codec.py), which sits below this room and is given this module as data
(analysis/__init__.py).

Layout: dataclasses as arrays of their fields in order (smaller and faster than objects
with keys); a `Ref` keeps its arguments inline, so a chain of n attributes nests n levels,
not 2n, and stays within the JSON encoder's depth. Decoding checks each field's type (the
store's readers), so a crafted or damaged entry is an error the store turns into a miss.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from ..store.cache_codec import bool_, dict_, int_, list_, opt_str, str_, strs
from ..syntax.refs import Ref
from .summary import ClassInfo, FunctionInfo, LazyClasses, LazyFunctions, ModuleSummary, Param, WrapperAssign


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
    if not isinstance(classes, LazyClasses) or not classes.pending and not functions_pending:
        return {name: _class(c) for name, c in classes.items()}
    return [[[name, None if c is None else _class(c)] for name, c in classes.done.items()],
            [[name, first, last] for name, (first, last) in classes.pending.items()],
            {name: sorted(values) for name, values in classes.constants.items()}]


def _functions(functions) -> dict | list:
    """A dict of functions; a lazily parsed module's with pending ones as [[name, function or
    None (pending)], ...] and their lines."""
    if not isinstance(functions, LazyFunctions) or not functions.pending:
        return {name: _function(f) for name, f in functions.items()}
    return [[[name, None if f is None else _function(f)] for name, f in functions.done.items()],
            [[name, first, last] for name, (first, last) in functions.pending.items()]]


def encode_summary(m: ModuleSummary) -> list:
    functions = _functions(m.functions)
    return [m.path, {name: _refs(refs) for name, refs in m.names.items()},
            _classes(m.classes, isinstance(functions, list)),
            functions, list(m.entry_classes), list(m.star_imports),
            None if m.all_names is None else list(m.all_names),
            {name: [list(x) for x in added] for name, added in m.late_members.items()}, _refs(m.entry_refs)]


def _load_node(v):
    if type(v) is list:
        return tuple(map(_load_node, v))
    if type(v) is dict:
        if set(v) != {"set"}:
            raise ValueError
        return frozenset(strs(v["set"]))
    if v is None or type(v) is str:
        return v
    raise TypeError


def decode_summary(v) -> ModuleSummary:
    """The loaders close over summary.py's classes."""
    def load_ref(v) -> Ref:
        kind, name, attr, *args = list_(v)
        return Ref(str_(kind), str_(name), str_(attr), tuple(map(load_ref, args)))

    def load_refs(v) -> tuple[Ref, ...]:
        return tuple(map(load_ref, list_(v)))

    def load_function(v) -> FunctionInfo:
        name, line, params, returns_value, returns, decorators, annotation, is_async, adds, supers, \
            abstract, spec_hidden = list_(v)
        return FunctionInfo(
            str_(name), int_(line),
            tuple(Param(str_(n), str_(k), opt_str(a), opt_str(d)) for n, k, a, d in map(list_, list_(params))),
            bool_(returns_value), load_refs(returns), strs(decorators), opt_str(annotation), bool_(is_async),
            None if adds is None else strs(adds), load_refs(supers), bool_(abstract), bool_(spec_hidden))

    def load_class(v) -> ClassInfo:
        name, line, column, end_line, bases, methods, attrs, assigns, forwards, decorators, keywords, body = list_(v)
        return ClassInfo(
            str_(name), int_(line), int_(column), int_(end_line), load_refs(bases),
            {str_(k): load_function(f) for k, f in dict_(methods).items()},
            {str_(k): (int_(line), load_refs(refs)) for k, (line, refs) in dict_(attrs).items()},
            {str_(k): [WrapperAssign(int_(line), load_refs(refs)) for line, refs in map(list_, list_(items))]
             for k, items in dict_(assigns).items()},
            _load_node(forwards), strs(decorators), bool_(keywords), int_(body))

    def load_classes(v) -> MutableMapping[str, ClassInfo]:
        if not isinstance(v, list):
            return {str_(k): load_class(c) for k, c in dict_(v).items()}
        done, pending, constants = list_(v)
        return LazyClasses({str_(name): None if c is None else load_class(c) for name, c in map(list_, list_(done))},
                           {str_(name): (int_(first), int_(last)) for name, first, last in map(list_, list_(pending))},
                           {str_(k): frozenset(strs(values)) for k, values in dict_(constants).items()})

    def load_functions(v, classes) -> MutableMapping[str, FunctionInfo]:
        if not isinstance(v, list):
            return {str_(k): load_function(f) for k, f in dict_(v).items()}
        if not isinstance(classes, LazyClasses):
            raise ValueError("pending functions without lazily parsed classes")
        done, pending = list_(v)
        return LazyFunctions(
            {str_(name): None if f is None else load_function(f) for name, f in map(list_, list_(done))},
            {str_(name): (int_(first), int_(last)) for name, first, last in map(list_, list_(pending))}, classes)

    path, names, classes, functions, entry_classes, stars, all_names, late, entry_refs = list_(v)
    loaded_classes = load_classes(classes)
    return ModuleSummary(
        str_(path), {str_(k): list(load_refs(refs)) for k, refs in dict_(names).items()},
        loaded_classes,
        load_functions(functions, loaded_classes), strs(entry_classes), strs(stars),
        None if all_names is None else strs(all_names),
        {str_(k): [(int_(line), str_(how), str_(member)) for line, how, member in map(list_, list_(added))]
         for k, added in dict_(late).items()}, load_refs(entry_refs))
