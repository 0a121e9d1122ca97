"""The capture chain: does the engine's capture call make the served model's logits
processor get aux hidden states?

Why by data flow: "the served class has set_eagle3_layers_to_capture" is not the
question. SGLang has shipped models whose every member exists while nothing is
captured (Qwen3.5-VL, 0.5.11 to 0.5.21: an inherited setter writes
`self.model.layers_to_capture`, the decoder decides capture by a per-layer flag), and
decoders that collect through per-layer flags although they never read a list named
`layers_to_capture`. So the chain is followed by what is written and read, whatever
the names:

  b. the member accepts the engine's call (one positional argument), and called with None
     it neither fails nor captures nothing: None means the default layers;
  c. what it writes, through delegation, `super()`, helper methods and module-level
     helpers: attributes of an object reached from the served one (`("model",)` is
     `self.model`), set or updated in place, or flags on that object's layers
     (`self.model.layers[i]._is_layer_to_capture`), with the shift it adds to the ids;
  d. what the decoder's forward reads to decide capture (the tests that guard what
     it appends to its aux list, or passes as a layer's capture target), and where it
     captures against the layer call (before: id k is written k + 1);
  e. whether that forward returns the list on the normal path (not idle, last
     pipeline rank, something captured), directly or through the forward it calls,
     and behind which of its own attributes (a gate the member must set);
  f/g. whether the forward above the decoder that makes logits unpacks the decoder's
     result under a test the member makes true, once, and hands the aux states to
     `self.logits_processor(...)`.

The member is walked twice, as the engine may call it: with a list, then with None.
Only what can be decided is decided: an operation the walk does not model that touches
what it tracks (the served object and what it holds, a layer, a local bound to one)
makes the chain "unknown" with the reason, never a finding. This module describes;
checks/capture_chain.py reports, checks/owner.py and `support` use `DecoderCapture.collects`,
so "collects" means one thing everywhere.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ...packs import load_normal_truths
from ..capture.links import Broken, Chain, Fn, Link, Methods, Path_, Place, Write, self_path
from ..python.choices import held_classes, read_off_classes
from ..python.normal_path import NormalPath, combined
from ..python.presence import has_member
from ..python.resolve import ClassEntity, FunctionEntity, Member, Resolver, SeqEntity
from ..syntax.refs import Ref
from ..syntax.scope import nodes_of
from ..syntax.sources import SourceError
from .served import HEAD, LOGITS, text_models

CAPTURE_HOOK = "set_eagle3_layers_to_capture"
FLAG = "capture_aux_hidden_states"
LAYER_CONTAINER = "layers"
OUTSIDE = "outside the scanned tree"  # the resolver's reason for a class of another package
# how a capture reaches the list: `slot` is AuxHiddenStatePacker's (layers/aux_hidden_states.py, 0.5.23):
# a producer writes the capture into the view it takes (`mhc_stream_mean(h, out=aux.slot(h[:, 0]))`)
_FEEDERS = ("append", "extend", "capture", "add", "insert", "slot")
# the engine's logits processor (sglang/srt/layers/logits_processor.py): `forward(input_ids,
# hidden_states, lm_head, logits_metadata, aux_hidden_states=None, ...)` in every release checked
# (0.5.2 to 0.5.23); the draft gets aux hidden states only through that argument
_ENGINE_PROCESSOR = ("layers.logits_processor", "LogitsProcessor")
_AUX_ARG = (4, "aux_hidden_states")
_LOGITS_OUTPUT = "LogitsProcessorOutput"
_DEPTH = 6
_FRESH = ("seq", "const", "call")  # values an attribute is bound to that no other object holds (a list made there)

_Holder = tuple["ClassEntity", "ClassEntity", "SetterEffect"]  # the served class, the object a flag is on, the effect


@dataclass
class SetterEffect:
    """What one run of the capture member does, on the normal path (last pipeline rank)."""

    writes: list[Write] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    none_fails: Place | None = None  # where a None argument is iterated before any None test
    missing: list[tuple[Place, str, ClassEntity]] = field(default_factory=list)  # calls of members the object lacks
    read_only: list[tuple[Place, str]] = field(default_factory=list)  # assignments of a property with no setter
    raises: Place | None = None  # where it raises on every path of this run (a decided `if not hasattr(...): raise`)
    calls: list[Place] = field(default_factory=list)  # members followed

    @property
    def refuses(self) -> bool:
        """Raises on purpose for this object: the member rules judge that, not the chain."""
        return self.raises is not None


@dataclass(frozen=True)
class DecoderCapture:
    """How a decoder's forward (the one that runs for its class) collects aux hidden states."""

    cls: ClassEntity
    attrs: frozenset[str]  # self attributes its capture tests read
    flags: frozenset[str]  # per-layer flags its capture tests read
    returns_aux: bool | None  # on the normal path; None: cannot tell
    place: Place | None  # the forward that decides
    why: str
    test: Place | None = None  # where its capture test reads the attribute or flag
    gates: frozenset[str] = frozenset()  # its own attributes an undecided test reads before returning aux
    boxed: bool = False  # returns aux inside an object it builds, not a tuple
    aux_fields: frozenset[str] = frozenset()  # the fields of that object (a NamedTuple, a dataclass) holding aux
    # where the capture sits against the layer call in its loop: "before" layer i runs (it holds
    # layer i-1's output: the engine's id k is written k + 1) or "after" (k); None: cannot tell
    placement: str | None = None
    # `N` of an enclosing `for loop in range(N)` that runs the layers again, numbered across the repeats
    # (`loop * num_layers + i`): the engine's ids span N times the layers; None where they do not repeat
    repeats: str | None = None
    # each place it captures against the layer call ("before", "after", "" where eaglelint cannot
    # tell), with where: several when the forward's paths capture in different places
    sites: tuple[tuple[str, Place], ...] = ()
    # each capture's own test: the attributes and flags it reads (a decoder that captures under
    # its list in one place and under a per-layer flag in another reads them apart)
    tests: frozenset[tuple[frozenset[str], frozenset[str], bool]] = frozenset()
    soft_flags: frozenset[str] = frozenset()  # flags it reads as `getattr(layer, "flag", False)`

    def alone(self, attrs: set[str]) -> bool:
        """Some capture in the layer loop has a test that reads one of `attrs` and no per-layer
        flag: those lists pick layers without any flag being set."""
        return any(a & attrs and not f and in_loop for a, f, in_loop in self.tests)

    @property
    def shift(self) -> int | None:
        """What the engine's layer id k must become in the list the decoder tests: a capture
        before layer i runs holds layer i - 1's output (k + 1), after it runs layer i's (k); a
        test asking about `i - 1` takes one away. None where the placement cannot be read.
        Where its paths capture in several places (before the next layer's call on one path,
        after the layer's on another), the one shift they all ask for, if every place can be
        read and they agree; None where they differ."""
        if self.placement is None and self.sites:
            shifts = {placement_shift(p) for p, _ in self.sites}
            return shifts.pop() if None not in shifts and len(shifts) == 1 else None
        return placement_shift(self.placement or "")

    @property
    def site_shifts(self) -> list[int]:
        """The shifts its capture places ask for, where they can be read, in their order."""
        return list(dict.fromkeys(s for p, _ in self.sites if (s := placement_shift(p)) is not None))

    @property
    def placement_text(self) -> str:
        """"captures before the layer call", "... after ...", with the test's own offset."""
        if len(self.sites) > 1:
            return "captures " + " and ".join(f"{_site_text(p)} in {at}" for p, at in self.sites)
        return f"captures {_site_text(self.placement or '')}"

    @property
    def collects(self) -> bool | None:
        if self.returns_aux is None:
            return None
        return bool(self.attrs or self.flags) and self.returns_aux


@dataclass
class _Read:
    """What reading one forward found (capture_chain's working state)."""

    attrs: set[str]
    flags: set[str]
    returns: bool | None
    place: Place
    test: Place | None
    gates: set[str]
    boxed: bool
    placements: dict[str, Place] = field(default_factory=dict)  # each placement, where it is first read
    fields: set[str | None] = field(default_factory=set)
    unread: list[str] = field(default_factory=list)
    repeats: set[str] = field(default_factory=set)
    tests: set[tuple[frozenset[str], frozenset[str], bool]] = field(default_factory=set)
    soft_flags: set[str] = field(default_factory=set)
    odd: list[str] = field(default_factory=list)  # capture tests that read a capture list in a way not read

    def merge(self, inner: _Read) -> None:
        self.odd += inner.odd
        self.repeats |= inner.repeats
        self.tests |= inner.tests
        self.soft_flags |= inner.soft_flags
        self.attrs |= inner.attrs
        self.flags |= inner.flags
        self.test = self.test or inner.test
        self.gates |= inner.gates
        for p, at in inner.placements.items():
            self.placements.setdefault(p, at)
        self.boxed = self.boxed or inner.boxed
        self.fields |= inner.fields
        self.unread += inner.unread


def _layer_object(node: ast.AST, env: dict[str, Path_], layers: dict[str, Path_]) -> Path_ | None:
    """The decoder path whose layer `node` is: `self.model.layers[i]`, or a local bound to one."""
    if isinstance(node, ast.Name) and node.id in layers:
        return layers[node.id]
    if isinstance(node, ast.Subscript):
        path = self_path(node.value, env)
        if path and path[-1] == LAYER_CONTAINER:
            return path[:-1]
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _no_aux(call: ast.Call) -> bool:
    """A call of the engine's logits processor that hands it no aux hidden states: nothing, or
    a literal None, in their place, and no `*args` / `**kwargs` that might carry them."""
    index, keyword = _AUX_ARG
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    given = [call.args[index]] if len(call.args) > index else []
    given += [k.value for k in call.keywords if k.arg == keyword]
    return all(isinstance(v, ast.Constant) and v.value is None for v in given)


def _is_super_call(call: ast.Call, name: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Call) \
        and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"


class CaptureChainAnalysis:
    """The chain of every served class, and how every decoder collects, memoised per run."""

    def __init__(self, resolver: Resolver, owners: Methods):
        self.resolver = resolver
        self.owners = owners
        self._decoders: dict[ClassEntity, DecoderCapture] = {}
        self._is_decoder: dict[ClassEntity, bool] = {}
        self._functions: dict[tuple[str, str], Fn | None] = {}
        # each run of a member, by served class, hook, the classes bound to paths, and None or a list
        self._effects: dict[tuple, SetterEffect | None] = {}
        # the forward of a class that makes logits, read (links f and g ask for it on both runs)
        self._served_forwards: dict[ClassEntity, tuple[ClassEntity, Fn, _ServedForward] | None] = {}

    # -- what an object is -------------------------------------------------
    def is_decoder(self, cls: ClassEntity) -> bool:
        """Holds layers and no head of its own, whatever its name."""
        if cls not in self._is_decoder:
            self._is_decoder[cls] = self._holds_layers(cls)
        return self._is_decoder[cls]

    def _holds_layers(self, cls: ClassEntity) -> bool:
        """Runs a stack of layers (a forward, `self.layers` or an `nn.ModuleList(...)`), no head."""
        resolver = self.resolver
        mro = resolver.mro(cls)
        if any(resolver.assigns(c, LOGITS) or resolver.assigns(c, HEAD) for c in mro) or not any(
                resolver.defines(c, "forward") for c in mro):
            return False
        assigns = [resolver.info(c).self_assigns for c in mro]
        return any(LAYER_CONTAINER in a or any(_builds_layers(v) for assign in a.values() for x in assign
                                                for v in x.values) for a in assigns)

    def generates(self, cls: ClassEntity) -> bool:
        """Has a logits processor of its own (assigned something other than None, or a member
        that gives one)."""
        for c in self.resolver.mro(cls):
            info = self.resolver.info(c)
            # `self.logits_processor: Optional[LogitsProcessor] = None` carries its annotation too
            if LOGITS in info.methods or any(not any(v.kind == "const" and v.name == "None" for v in a.values)
                                             for a in info.self_assigns.get(LOGITS, [])):
                return True
        return False

    def can_generate(self, cls: ClassEntity, depth: int = 2) -> bool:
        """Has a logits processor of its own, or holds (two levels down) a model that has one,
        or holds an SGLang model eaglelint cannot resolve (then it may)."""
        if self.generates(cls):
            return True
        if depth == 0:
            return False
        for c in self.resolver.mro(cls):
            for attr in self.resolver.info(c).self_assigns:
                if attr in (HEAD, LAYER_CONTAINER):
                    continue
                classes, reasons = held_classes(self.resolver, cls, attr)
                if not classes and attr in _MODEL_HOLDERS:  # read off an object it builds (CLIPModel)
                    classes = read_off_classes(self.resolver, cls, attr)
                    reasons = [] if classes else reasons
                if any(self.can_generate(h, depth - 1) for h in classes):
                    return True
                if not classes and attr in _MODEL_HOLDERS and any(OUTSIDE not in r for r in reasons):
                    return True  # undecided: may be a generating model (SGLang's logits processor
                    # lives only in SGLang's models, never in a class from outside the tree)
        return False

    def classes_at(self, served: ClassEntity, path: Path_, bound: dict[Path_, ClassEntity]) -> list[ClassEntity]:
        """Classes the object at `path` may be, in an instance of served."""
        if path in bound:
            return [bound[path]]
        if not path:
            return [served]
        out = []
        for parent in self.classes_at(served, path[:-1], bound):
            classes, _ = held_classes(self.resolver, parent, path[-1])
            out += [c for c in classes if c not in out]
        return out

    # -- c: what the member writes -------------------------------------------
    def effect(self, served: ClassEntity, hook: str, bound: dict[Path_, ClassEntity],
               none: bool = False) -> SetterEffect | None:
        """What the member does when the engine calls it with a list of layer ids, or (`none`)
        with None (read once; links b, f and g all ask for the run with None)."""
        key = (served, hook, tuple(bound.items()), none)
        if key not in self._effects:
            self._effects[key] = self._effect(served, hook, bound, none)
        return self._effects[key]

    def _effect(self, served: ClassEntity, hook: str, bound: dict[Path_, ClassEntity],
                none: bool) -> SetterEffect | None:
        member = self.resolver.find_member(served, hook)
        if member is None:
            return None
        fn, owner, what = self.member_function(served, member, hook)
        out = SetterEffect()
        if fn is None:
            out.unknown.append(f"{what} cannot be read")
            return out
        place = Place(owner, fn.lineno, what)
        out.calls.append(place)
        walk = _Walk(self, served, owner, (), bound, out, set(), 0, {}, set(), place, none)
        walk.run(fn, static="staticmethod" in _decorators(fn, member))
        return out

    def absent_reads(self, served: ClassEntity, fn: Fn) -> list[tuple[int, str]]:
        """`self.X` the member reads on every run (in a statement of its own body, or the test of
        one of its top-level `if`s) where served has no X at all: its classes assign, define or
        add none, and the only base eaglelint cannot read is torch's `nn.Module` (whose own
        attributes `_MODULE_ATTRS` are known), with no `__getattr__` and no name set at run time
        in their class bodies. [] wherever that cannot be known."""
        params = [*fn.args.posonlyargs, *fn.args.args]
        if not params:
            return []
        me = params[0].arg
        out: list[tuple[int, str]] = []
        for stmt in fn.body:
            heads = [stmt.test] if isinstance(stmt, ast.If) else [] if isinstance(
                stmt, (ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)) else [stmt]
            for head in heads:
                for n in nodes_of(head):
                    if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) \
                            and n.value.id == me and n.attr not in _MODULE_ATTRS \
                            and not has_member(self.resolver, served, n.attr):
                        out.append((n.lineno, n.attr))
        if not out:
            return []
        for c in self.resolver.mro(served):  # only now: whether "has none" can be known at all
            info = self.resolver.info(c)
            _, opaque = self.resolver.bases(c)
            if opaque and not all(r.kind == "attr" and r.name == "Module" for r in self.resolver.base_refs(c)
                                  if not any(isinstance(e, ClassEntity) for e in self.resolver.evaluate(r, c.path))):
                return []
            if "__getattr__" in info.methods or "__getattribute__" in info.methods:
                return []
            body = self._body_text(c)
            if body is None or any(call in body for call in ("register_buffer(", "add_module(", "register_module(",
                                                              "setattr(")):
                return []  # a name set at run time
        return out

    def read_only(self, cls: ClassEntity, name: str) -> bool:
        """`name` is a property of cls with no setter (the last definition in the class that
        defines it is decorated `@property` alone): assigning it raises AttributeError."""
        member = self.resolver.find_member(cls, name)
        if member is None or member.function is None:
            return False
        info = self.resolver.info(member.owner).methods.get(name)
        decorators = set(info.decorators) if info is not None else set()
        return "property" in decorators and not any(d.endswith(".setter") for d in decorators)

    def run_member(self, served: ClassEntity, fn: Fn, none: bool = False) -> SetterEffect:
        """What a capture member not yet in the source (one a fix is about to write) would do in
        served, called by the engine with a list of layer ids or (`none`) with None."""
        out = SetterEffect()
        place = Place(served, fn.lineno, f"{served.qualname}.{fn.name}")
        _Walk(self, served, served, (), {}, out, set(), 0, {}, set(), place, none).run(fn)
        return out

    def member_function(self, cls: ClassEntity, member: Member, name: str) -> tuple[Fn | None, ClassEntity, str]:
        """The function a member runs: a method, or what a class attribute is bound to
        (`set_eagle3_layers_to_capture = Other.set_eagle3_layers_to_capture`, a module-level
        function), with the class it is read in and its name for messages."""
        owner = member.owner
        what = f"{owner.qualname}.{name}"
        if member.function is not None:
            return self.owners.method_node(owner, name, positions=True), owner, what
        _, refs = self.resolver.info(owner).attrs.get(name, (0, ()))
        found = [e for r in refs for e in self.resolver.evaluate(r, owner.path, cls)]
        if len(found) != 1 or not isinstance(found[0], FunctionEntity):
            return None, owner, what
        fn = found[0]
        if fn.defined_in is not None:
            defined = ClassEntity(fn.path, fn.defined_in)
            return self.owners.method_node(defined, fn.name, positions=True), defined, f"{fn.defined_in}.{fn.name}"
        return self.function_node(fn), ClassEntity(fn.path, fn.name), fn.name

    def function_node(self, fn: FunctionEntity) -> Fn | None:
        """A module-level function's syntax tree (the last `def` of that name at column 0)."""
        key = (fn.path, fn.name)
        if key not in self._functions:
            try:
                tree = self.resolver.project.tree(fn.path)
            except SourceError:
                self._functions[key] = None
            else:
                self._functions[key] = next((n for n in reversed(tree.body) if isinstance(
                    n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == fn.name), None)
        return self._functions[key]

    # -- d, e: what a decoder reads and returns ------------------------------
    def decoder(self, cls: ClassEntity) -> DecoderCapture:
        if cls not in self._decoders:
            self._decoders[cls] = self._decoder(cls)
        return self._decoders[cls]

    def _decoder(self, cls: ClassEntity) -> DecoderCapture:
        found = self._forward_of(cls, self.resolver.mro(cls))
        if found is None:
            return DecoderCapture(cls, frozenset(), frozenset(), None, None,
                                  f"no forward of {cls.qualname} or its bases can be read")
        read = self._read_forward(cls, found[0], found[1], 0)
        attrs, flags, returns, place, test = read.attrs, read.flags, read.returns, read.place, read.test
        if read.unread and not (attrs or flags):
            returns = None
        where = str(place)
        if returns is None:
            why = f"{where} returns what a forward eaglelint cannot read returns"
        elif not (attrs or flags):
            why = f"{where} collects no aux hidden states (nothing it returns is appended to under a capture test)"
        elif not returns:
            why = f"{where} collects aux hidden states but does not return them on the normal path"
        else:
            names = [f"self.{a}" for a in sorted(attrs)] + [f"per-layer flag {f}" for f in sorted(flags)]
            why = f"{where} collects aux hidden states (reads {', '.join(names)})"
        if returns is None and read.unread:
            why = "; ".join(read.unread)
        if read.odd and returns is not False:
            returns, why = None, "; ".join(dict.fromkeys(read.odd))  # which layers it captures is not read
        placements: dict[str, Place] = {}
        for p, at in read.placements.items():
            if p.startswith("handed:"):
                handed, _, offset = p[len("handed:"):].partition(";")
                where = self._layer_placement(cls, handed)
                p = where + offset if where else ""
            placements.setdefault(p, at)
        placements = {p: at for p, at in placements.items() if p != "outside"} or placements
        placement = next(iter(placements)) if len(placements) == 1 and "outside" not in placements else ""
        return DecoderCapture(cls, frozenset(attrs), frozenset(flags), returns, place, why, test,
                              frozenset(read.gates - attrs), read.boxed,
                              aux_fields=frozenset(f for f in read.fields if f) if None not in read.fields
                              else frozenset(), placement=placement or None,
                              repeats=next(iter(read.repeats)) if len(read.repeats) == 1 else None,
                              sites=tuple(placements.items()) if len(placements) > 1 else (),
                              tests=frozenset(read.tests), soft_flags=frozenset(read.soft_flags))

    def layer_classes(self, cls: ClassEntity) -> list[ClassEntity]:
        """The classes a decoder builds its `self.layers` from (`make_layers(n, lambda idx, prefix:
        Glm4DecoderLayer(...))`, `nn.ModuleList([Layer(...) for ...])`): the classes called in the
        value assigned, read from the method that assigns it; [] where none can be found."""
        memo = self.resolver.memos.setdefault("chain.layer_classes", {})
        if cls not in memo:
            memo[cls] = self._layer_classes(cls)
        return memo[cls]

    def _layer_classes(self, cls: ClassEntity) -> list[ClassEntity]:
        for c in self.resolver.mro(cls):
            info = self.resolver.info(c)
            assigns = info.self_assigns.get(LAYER_CONTAINER)
            if not assigns:
                continue
            out: list[ClassEntity] = []
            for assign in assigns:
                method = max((m for m in info.methods.values() if m.line <= assign.line), key=lambda m: m.line,
                             default=None)
                fn = self.owners.method_node(c, method.name, positions=True) if method else None
                if fn is None:
                    return []
                for ent in self._built_classes(c, fn, assign.line):
                    if ent not in out:
                        out.append(ent)
            return out
        return []

    def _built_classes(self, cls: ClassEntity, fn: Fn, line: int) -> list[ClassEntity]:
        """Classes with a forward that the assignment on `line` of fn calls, directly or through a
        local or parameter (`layer_type = layer_type or Glm4DecoderLayer`, `def layer_fn(...)`)."""
        local: dict[str, list[ast.AST]] = {}  # a local or parameter: what it may hold
        at: list[ast.Assign] = []
        for n in nodes_of(fn):
            if isinstance(n, ast.Assign):
                if n.lineno == line:
                    at.append(n)
                if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    local.setdefault(n.targets[0].id, []).append(n.value)
            elif isinstance(n, ast.FunctionDef) and n is not fn:  # `def layer_fn(idx, prefix): return ...`
                local.setdefault(n.name, []).extend(
                    r.value for r in nodes_of(n) if isinstance(r, ast.Return) and r.value is not None)
                for a in nodes_of(n):  # its own locals (`layer_class = LAYER_TYPES[...]`)
                    if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name):
                        local.setdefault(a.targets[0].id, []).append(a.value)
        for param, default in _defaults(fn).items():
            local.setdefault(param, []).append(default)
        out: list[ClassEntity] = []
        for n in at:
            names = [m.func.id for m in nodes_of(n.value) if isinstance(m, ast.Call) and isinstance(m.func, ast.Name)]
            names += [m.id for m in nodes_of(n.value) if isinstance(m, ast.Name) and m.id in local]
            seen: set[str] = set()
            while names:
                name = names.pop()
                if name in seen:
                    continue
                seen.add(name)
                if name in local:
                    names += self._names_in(cls, local[name])
                    continue
                if not name[:1].isupper():  # a pre-filter: `make_layers`, `add_prefix` are not resolved
                    continue
                found = self.resolver.lookup(cls.path, name)
                for seq in [e for e in found if isinstance(e, SeqEntity)]:  # `LAYER_TYPES = {"attention": A, ...}`
                    found += [x for item in seq.items for x in self.resolver.evaluate(item, seq.path)]
                out += [ent for ent in found if isinstance(ent, ClassEntity)]  # a layer: whose forward runs
        return out

    def _names_in(self, cls: ClassEntity, values: list[ast.AST]) -> list[str]:
        """The names a local's values read, and those a class attribute they index names
        (`self.decoder_layer_types[...]`, `decoder_layer_types = ALL_DECODER_LAYER_TYPES`)."""
        out = [m.id for v in values for m in nodes_of(v) if isinstance(m, ast.Name)]
        for attr in {m.attr for v in values for m in nodes_of(v) if isinstance(m, ast.Attribute) and _of_self(m)}:
            for c in self.resolver.mro(cls):
                _, refs = self.resolver.info(c).attrs.get(attr, (0, ()))
                out += [r.name for r in refs if r.kind == "name" and r.name[:1].isupper()]
        return out

    def _layer_placement(self, cls: ClassEntity, handed: str) -> str:
        """Where a layer's forward uses the capture target the decoder hands it: "before" when
        every use comes before each of its own module calls (`self.self_attn(...)`,
        `self.mlp(...)`: the layer's input is what is captured), "after" when after them all;
        "" where the layer classes, the parameter or the order cannot be read, or they differ."""
        found: set[str] = set()
        layers = self.layer_classes(cls)
        for layer in layers:
            forward = self._forward_of(layer, self.resolver.mro(layer))
            if forward is None:
                continue  # a class the value builds that is no layer (a config, a helper object)
            owner, fn = forward
            params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][1:]
            if handed.startswith("#"):
                index = int(handed[1:])
                name = params[index] if index < len(params) else None
            else:
                name = handed if handed in params or handed in {a.arg for a in fn.args.kwonlyargs} else None
            # taken through **kwargs: `kwargs.get("captured_last_layer_outputs")`, `kwargs["..."]`
            kwargs = fn.args.kwarg.arg if fn.args.kwarg is not None and name is None \
                and not handed.startswith("#") else None
            if name is None and kwargs is None:
                return ""
            methods = {m for c in self.resolver.mro(owner) for m in self.resolver.info(c).methods}
            uses: list[int] = []
            runs: list[ast.Call] = []
            for n in nodes_of(fn):
                if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) or \
                        kwargs is not None and isinstance(n, ast.expr) and _reads_key(n, kwargs, handed):
                    uses.append(getattr(n, "lineno", 0))
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _of_self(n.func) \
                        and n.func.attr not in methods:
                    runs.append(n)
            if not uses or not runs:
                return ""
            if max(uses) < min(r.lineno for r in runs):
                found.add("before")
            elif min(uses) > max(r.end_lineno or r.lineno for r in runs):
                found.add("after")
            else:
                return ""
        return next(iter(found)) if len(found) == 1 else ""

    def _forward_of(self, cls: ClassEntity, mro: list[ClassEntity]) -> tuple[ClassEntity, Fn] | None:
        for c in mro:
            if self.resolver.defines(c, "forward"):
                node = self.owners.method_node(c, "forward", positions=True)
                return (c, node) if node is not None else None
        return None

    def _read_forward(self, cls: ClassEntity, defined: ClassEntity, fn: Fn, depth: int,
                      aux_params: frozenset[str] = frozenset()) -> _Read:
        """What one forward (or a helper handed the aux list as `aux_params`) reads to decide
        capture and returns, following super().forward and self helpers."""
        place = Place(defined, fn.lineno, f"{defined.qualname}.{fn.name}")
        reader = _ForwardReader(fn, aux_params)
        out = _Read(set(reader.attrs), set(reader.flags), reader.returns_aux, place,
                    Place(defined, reader.test_line, place.what) if reader.test_line else None,
                    set(reader.gates), reader.boxed,
                    {p: Place(defined, line, place.what) for p, line in reader.placements.items()},
                    {self._field(defined, call, index, keyword) for call, index, keyword in reader.boxes},
                    repeats=set(reader.repeats), tests=set(reader.tests),
                    soft_flags=set(reader.soft_flags),
                    odd=[f"{Place(defined, getattr(t, 'lineno', fn.lineno), place.what)} captures only where "
                         f"{ast.unparse(t)}, which eaglelint does not read" for t in reader.odd])
        for callee in reader.passes:  # returns what another forward or helper returns
            target = self._callee(cls, defined, callee)
            if target is None and self._submodule(cls, callee[1]):
                continue  # `self.norm(hidden_states)`: a layer it holds, not a helper
            node = self.owners.method_node(*target, positions=True) if target and depth <= _DEPTH else None
            if node is None or target is None:
                if out.returns is False:
                    out.returns = None  # returns what eaglelint cannot read
                continue
            inner = self._read_forward(cls, target[0], node, depth + 1)
            out.merge(inner)
            if inner.returns:
                out.returns = True
            elif inner.returns is None and out.returns is False:
                out.returns = None
        for call in reader.helper_calls:  # a helper the forward hands its aux list to collects into it
            handed = [i for i, a in enumerate(call.args) if isinstance(a, ast.Name) and a.id in reader.aux]
            keywords = {k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name)
                        and k.value.id in reader.aux}
            if not (handed or keywords or not (out.attrs or out.flags)):
                continue
            assert isinstance(call.func, ast.Attribute)
            target = self._callee(cls, defined, ("self", call.func.attr))
            node = self.owners.method_node(*target, positions=True) if target and depth <= _DEPTH else None
            if node is None or target is None:
                if handed or keywords:
                    out.unread.append(f"{place} hands its aux list to self.{call.func.attr}, which eaglelint "
                                      f"cannot read")
                continue
            params = [a.arg for a in [*node.args.posonlyargs, *node.args.args]][1:]
            names = frozenset({params[i] for i in handed if i < len(params)} | keywords)
            inner = self._read_forward(cls, target[0], node, depth + 1, names)
            out.attrs |= inner.attrs
            out.flags |= inner.flags
            for p, at in inner.placements.items():
                out.placements.setdefault(p, at)
            out.repeats |= inner.repeats
            out.test = out.test or inner.test
            out.unread += inner.unread
            out.odd += inner.odd
        return out

    def _field(self, defined: ClassEntity, call: ast.Call, index: int | None, keyword: str | None) -> str | None:
        """The field of a NamedTuple or dataclass built by `call` that the aux list goes into."""
        if not isinstance(call.func, ast.Name):
            return None
        found = [e for e in self.resolver.lookup(defined.path, call.func.id) if isinstance(e, ClassEntity)]
        if len(found) != 1:
            return None
        try:
            tree = self.resolver.project.tree(found[0].path)
        except SourceError:
            return None
        node = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == found[0].qualname), None)
        if node is None or not (any(_decorator_name(d) == "dataclass" for d in node.decorator_list)
                                or any(_decorator_name(b) == "NamedTuple" for b in node.bases)):
            return None
        fields = [n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
        if keyword is not None:
            return keyword if keyword in fields else None
        return fields[index] if index is not None and index < len(fields) else None

    def _submodule(self, cls: ClassEntity, name: str) -> bool:
        return any(name in self.resolver.info(c).self_assigns for c in self.resolver.mro(cls))

    def _callee(self, cls: ClassEntity, defined: ClassEntity,
                callee: tuple[str, str]) -> tuple[ClassEntity, str] | None:
        kind, name = callee
        mro = self.resolver.mro(cls)
        start = mro.index(defined) + 1 if kind == "super" and defined in mro else 0
        for c in mro[start:]:
            if self.resolver.defines(c, name):
                return c, name
        return None

    # -- what a fix may write ------------------------------------------------
    def wrapper_capture_plan(self, wrapper: ClassEntity, held: list[ClassEntity], attr: str) -> tuple[str, str | None]:
        """capture_member_plan over every class self.<attr> may hold: the one plan they agree on;
        a model the checkpoint picks from the registry is delegated to (each candidate's own
        chain is judged where it is served); classes that disagree leave it to be written by hand."""
        if self.checkpoint_chosen(wrapper, held):
            return "delegate", None
        plans = {self.capture_member_plan(wrapper, c) for c in held}
        if len(plans) == 1:
            return next(iter(plans))
        return "refuse", f"self.{attr} may hold a decoder body or a whole model; write the member by hand"

    def capture_member_plan(self, wrapper: ClassEntity, held: ClassEntity) -> tuple[str, str | None]:
        """How a wrapper that lacks the capture member may get it: ("delegate", None) when the
        held object's member has the served contract (the held class makes its own logits);
        ("owner", None) when it is a decoder body whose own member only marks layers, and the
        wrapper can be written as an owner (set its flag, map None to the default layers, shift
        by one, call the decoder's marker); ("refuse", why) otherwise."""
        if not self.is_decoder(held) or self.generates(held):
            return "delegate", None
        member = self.resolver.find_member(held, CAPTURE_HOOK)
        where = f"{held.qualname}.{CAPTURE_HOOK}"
        if member is None or member.function is None:
            return "refuse", f"{held.qualname} is a decoder body without {CAPTURE_HOOK}"
        where = f"{member.owner.qualname}.{CAPTURE_HOOK} ({Path(member.owner.path).name}:{member.line})"
        effect = self.effect(held, CAPTURE_HOOK, {})
        capture = self.decoder(held)
        marks = {w.name for w in effect.writes if w.path == () and w.per_layer} if effect else set()
        lists = {w.name for w in effect.writes if w.path == () and not w.per_layer} if effect else set()
        if not capture.collects or not (marks & capture.flags or lists & capture.attrs):
            return "refuse", f"{held.qualname} is a decoder body, and {where} does not mark what its forward " \
                             f"reads ({capture.why}); write the member by hand"
        if not any(LAYER_CONTAINER in self.resolver.info(c).self_assigns for c in self.resolver.mro(held)):
            return "refuse", f"{held.qualname} keeps its layers under another name; write the member by hand"
        found = self._logits_forward(wrapper)
        if found is None:
            return "refuse", f"{held.qualname} is a decoder body (its {where} takes ready layer indexes and " \
                             f"sets no served flag), and no forward of {wrapper.qualname} calls " \
                             f"self.logits_processor to unpack its tuple; write the member by hand"
        tests = any(isinstance(n, ast.Attribute) and n.attr == FLAG for n in nodes_of(found[1]))
        initialised = any(FLAG in self.resolver.info(c).self_assigns or FLAG in self.resolver.info(c).attrs
                          for c in self.resolver.mro(wrapper))
        if not (tests and initialised):
            return "refuse", f"{held.qualname} is a decoder body, and {found[0].qualname}.forward does not " \
                             f"unpack its tuple under self.{FLAG}; write the member by hand"
        return "owner", None

    # -- the whole chain -----------------------------------------------------
    def chain(self, served: ClassEntity, hook: str = CAPTURE_HOOK) -> Chain | None:
        """The chain of a served class that has the capture member, or None without one."""
        member = self.resolver.find_member(served, hook)
        if member is None:
            return None
        where = Place(member.owner, member.line, f"{member.owner.qualname}.{hook}")
        fn, _, _ = self.member_function(served, member, hook)
        if fn is None:
            return Chain(served, hook, where, None, (), (f"{where} is bound to what eaglelint cannot read",))
        decorators = _decorators(fn, member)
        if decorators & _PROPERTIES and not self._gives_data(served, fn):
            return Chain(served, hook, where, None, (), (f"{where} is a property whose value eaglelint cannot tell "
                                                         f"is not a function the engine can call",))
        problems = self._accepts(fn, where, decorators)
        decoders = self.decoder_bindings(served)
        if not decoders:
            return Chain(served, hook, where, None, tuple(problems),
                         (f"{served.qualname} holds no decoder eaglelint can find",))
        broken: list[Broken] = list(problems)
        for line, attr in self.absent_reads(served, fn) if member.function is not None else ():
            at = Place(member.owner, line, where.what)
            broken.append(Broken(
                Link.WRITE, f"{at} reads self.{attr}, which {served.qualname} does not have: the engine's "
                f"call raises AttributeError", at, None, fails=True))
        if len(broken) > len(problems):
            return Chain(served, hook, where, None, tuple(broken), ())
        unknown: list[str] = []
        first: ClassEntity | None = None
        raises: list[Place] = []
        runs = 0
        for dpath, dcls, bound in decoders:
            first = first or dcls
            effect = self.effect(served, hook, bound)
            if effect is None:
                continue
            runs += 1
            unknown += effect.unknown
            if effect.raises is not None:
                raises.append(effect.raises)
                continue  # the member raises for this decoder on purpose: the member rules judge that
            for place, called, cls in effect.missing:
                broken.append(Broken(Link.WRITE, f"{place} calls {called}, which {cls.qualname} does not have: the "
                                                 f"engine's call raises AttributeError", place, None, fails=True))
            for place, target in effect.read_only:
                broken.append(Broken(Link.WRITE, f"{place} assigns {target}, a property with no setter: the engine's "
                                                 f"call raises AttributeError", place, None, fails=True))
            if effect.missing or effect.read_only:
                continue
            found, undecided = self._links_cde(served, dpath, dcls, effect, where)
            broken += found
            unknown += undecided
            none_found: list[Broken] = []
            if hook == CAPTURE_HOOK and not found and not undecided and not effect.unknown and not problems:
                # only EAGLE-3's engine passes None (no layers in the draft config); DFlash and
                # DSpark always pass a list (spec_aux_hidden_state.py)
                none_found, none_unknown = self._link_none(served, dpath, dcls, bound, hook, where)
                broken += none_found
                unknown += none_unknown
            found, undecided = self._links_fg(served, dpath, dcls, bound, effect, where)
            if hook == CAPTURE_HOOK and not found and not undecided and not effect.unknown and not none_found:
                found, undecided = self._links_fg_none(served, dpath, dcls, bound, hook, where)
            broken += found
            unknown += undecided
        return Chain(served, hook, where, first, tuple(dict.fromkeys(broken)), tuple(dict.fromkeys(unknown)),
                     raises[0] if raises and len(raises) == runs else None)

    def _link_none(self, served: ClassEntity, dpath: Path_, dcls: ClassEntity, bound: dict[Path_, ClassEntity],
                   hook: str, where: Place) -> tuple[list[Broken], list[str]]:
        """Link b with None: the engine passes None when the draft config names no layers, and
        expects the default layers to be captured."""
        effect = self.effect(served, hook, bound, none=True)
        if effect is None:
            return [], []
        if effect.none_fails is not None:
            return [Broken(Link.CALL, f"{effect.none_fails} iterates the layer ids while they are None; the engine "
                                      f"passes None when the draft config names no layers", effect.none_fails, None,
                           fails=True)], []
        if effect.raises is not None:
            return [Broken(Link.CALL, f"{effect.raises} raises when the layer ids are None; the engine passes None "
                                      f"when the draft config names no layers", effect.raises, None, fails=True)], []
        if effect.unknown:
            return [], effect.unknown
        capture = self.decoder(dcls)
        writes = [w for w in effect.writes if self.canonical(served, w.path) == dpath and not w.empty
                  and (w.name in capture.flags if w.per_layer else w.name in capture.attrs)]
        if writes or not capture.collects:
            return [], []
        return [Broken(Link.CALL, f"{where} called with None (the engine's call when the draft config names no "
                                  f"layers) marks no layer of self.{'.'.join(dpath)}: nothing is captured", where,
                       capture.test or capture.place)], []

    def _links_fg_none(self, served: ClassEntity, dpath: Path_, dcls: ClassEntity, bound: dict[Path_, ClassEntity],
                       hook: str, where: Place) -> tuple[list[Broken], list[str]]:
        """Links f and g once the member ran with None: the flag the served forward tests is
        what that run leaves (`self.capture_aux_hidden_states = layer_ids is not None` leaves it
        false), and the decoder captures its default layers all the same."""
        effect = self.effect(served, hook, bound, none=True)
        if effect is None or effect.none_fails is not None or effect.raises is not None:
            return [], []  # link b's None half says so
        if effect.unknown:
            return [], effect.unknown
        found, undecided = self._links_fg(served, dpath, dcls, bound, effect, where)
        said = "called with None (the engine's call when the draft config names no layers)"
        return [replace(b, message=f"{said}: {b.message}") for b in found], undecided

    def _gives_data(self, served: ClassEntity, fn: Fn) -> bool:
        """A property getter that returns data, never a function: literals, or attributes of the
        served object every assignment of which is a literal (`self.model.layers_to_capture`)."""
        for ret in (n for n in nodes_of(fn) if isinstance(n, ast.Return)):
            value = ret.value
            if value is None or isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp,
                                                   ast.DictComp, ast.SetComp, ast.JoinedStr)):
                continue
            path = self_path(value, {fn.args.args[0].arg: ()} if fn.args.args else {})
            if not path:
                return False
            owners = self.classes_at(served, path[:-1], {})
            values = [v for c in owners for o in self.resolver.mro(c)
                      for a in self.resolver.info(o).self_assigns.get(path[-1], ()) for v in a.values]
            if not owners or not values or any(self.resolver.find_member(c, path[-1]) for c in owners) or not all(
                    v.kind in ("seq", "const") or (v.kind == "unknown" and v.name.startswith(("ListComp", "DictComp")))
                    for v in values):
                return False
        return True

    def _accepts(self, fn: Fn, where: Place, decorators: set[str]) -> list[Broken]:
        """Link b: the engine calls the member with one positional argument."""
        if decorators & _PROPERTIES:
            return [Broken(Link.CALL, f"{where} is a property; the engine calls it", where, None)]
        if decorators - set(_KNOWN_DECORATORS):
            return []  # a decorator eaglelint does not know may change how it is called
        params = [*fn.args.posonlyargs, *fn.args.args]
        static = "staticmethod" in decorators
        own = params if static else params[1:]
        required = len(own) - len(fn.args.defaults)
        if fn.args.vararg is not None:
            return [] if required <= 1 else [
                Broken(Link.CALL, f"{where} requires {required} arguments; the engine passes one", where, None)]
        if not own:
            return [Broken(Link.CALL, f"{where} takes no layer ids; the engine passes one argument", where, None)]
        if required > 1:
            return [Broken(Link.CALL, f"{where} requires {required} arguments; the engine passes one", where, None)]
        if any(d is None for d in fn.args.kw_defaults):
            return [Broken(Link.CALL, f"{where} requires a keyword-only argument; the engine passes one positional "
                                      f"argument", where, None)]
        return []

    def decoder_paths(self, served: ClassEntity) -> list[tuple[Path_, ClassEntity]]:
        """Decoders the served object holds, as paths: `self.model`, or a held full model's
        `self.language_model.model`, one level deep."""
        return [(path, cls) for path, cls, _ in self.decoder_bindings(served)]

    def decoder_bindings(self, served: ClassEntity) -> list[tuple[Path_, ClassEntity, dict[Path_, ClassEntity]]]:
        """As decoder_paths, each with the class of every object on its path (a held
        DeepseekV2ForCausalLM holds a DeepseekV2Model; a DeepseekForCausalLM, a DeepseekModel)."""
        out: list[tuple[Path_, ClassEntity, dict[Path_, ClassEntity]]] = []
        seen: set[ClassEntity] = set()
        todo: list[tuple[Path_, ClassEntity, dict[Path_, ClassEntity]]] = [((), served, {})]
        while todo:
            path, cls, bound = todo.pop(0)
            if cls in seen or len(path) > 2:
                continue
            seen.add(cls)
            for attr in self._held_attrs(cls):
                if self._alias_of(cls, attr) is not None:
                    continue  # `@property def model(self): return self.language_model`: judged once, as that
                classes, _ = held_classes(self.resolver, cls, attr)
                if self.checkpoint_chosen(cls, classes):
                    continue  # each registered model's own chain is judged where it is served
                for held in classes:
                    where = path + (attr,)
                    if self.is_decoder(held):
                        out.append((where, held, {**bound, where: held}))
                    else:  # a whole model, or a part that holds one (`self.thinker.model`)
                        todo.append((where, held, {**bound, where: held}))
        return out

    def checkpoint_chosen(self, cls: ClassEntity, classes: list[ClassEntity]) -> bool:
        """classes are every registered text model: the registry picks one by the name the
        checkpoint's config gives (Llava's `ModelRegistry.resolve_model_cls(arch)`)."""
        return len(classes) > 1 and set(classes) == set(text_models(self.resolver, cls.path))

    def _alias_of(self, cls: ClassEntity, attr: str) -> Path_ | None:
        """The path on self that `attr` only ever names (a property or an assignment whose every
        value is `self.<other>`, or `self.<other>.<inner>`: InternVL's `self.model =
        self.language_model.model`), so both reach the same object; None otherwise."""
        values = [v for c in self.resolver.mro(cls) for a in self.resolver.info(c).self_assigns.get(attr, ())
                  for v in a.values]
        others = {_ref_path(v) for v in values}
        if values and len(others) == 1 and None not in others:
            other = next(iter(others))
            if other is not None and other[0] != attr:
                return other
        return None

    def canonical(self, served: ClassEntity, path: Path_) -> Path_:
        """path with its first attribute replaced by the path it aliases on the served object."""
        if path and (other := self._alias_of(served, path[0])) is not None:
            return (*other, *path[1:])
        return path

    def _held_attrs(self, cls: ClassEntity) -> list[str]:
        """Attributes assigned in cls's MRO whose value is a model class (not a layer, head or buffer)."""
        attrs: list[str] = []
        for c in self.resolver.mro(cls):
            for attr in self.resolver.info(c).self_assigns:
                if attr not in attrs and attr in _MODEL_HOLDERS:
                    attrs.append(attr)
        return attrs

    def _links_cde(self, served: ClassEntity, dpath: Path_, dcls: ClassEntity, effect: SetterEffect,
                   where: Place) -> tuple[list[Broken], list[str]]:
        """(broken links c, d, e; what keeps them from being decided)."""
        writes = [w for w in effect.writes if self.canonical(served, w.path) == dpath and w.name != FLAG]
        capture = self.decoder(dcls)
        reader = capture.place
        if capture.returns_aux is None:
            return [], [capture.why]
        attrs = {w.name for w in writes if not w.per_layer}
        flags = {w.name for w in writes if w.per_layer}
        obj = "self." + ".".join(dpath)
        if capture.returns_aux and not (capture.attrs or capture.flags):
            return [], [f"{capture.place} returns aux hidden states, but eaglelint cannot read the test that "
                        f"decides what it captures"]
        matched = attrs & capture.attrs or flags & capture.flags
        if not matched and effect.unknown:
            return [], []  # what the member does is not all known: the reasons are the effect's
        shared = [] if matched else self._shared_reasons(served, effect, capture)
        if shared:
            return [], shared
        if not writes:
            return [Broken(Link.WRITE, f"{where} writes nothing on {obj} ({dcls.qualname}), which decides what is "
                                       f"captured: nothing is captured", where, reader)], []
        writer = writes[0].place
        wrote = ", ".join([f"{obj}.{a}" for a in sorted(attrs)] + [f"per-layer flag {f} on {obj}.layers[i]"
                                                                   for f in sorted(flags)])
        if not matched:
            if not (capture.attrs or capture.flags):
                return [Broken(Link.READ, f"{writer} writes {wrote}; {capture.why}: nothing is captured", writer,
                               reader)], []
            read = ", ".join([f"self.{a}" for a in sorted(capture.attrs)] +
                             [f"layer.{f}" for f in sorted(capture.flags)])
            reader = capture.test or reader
            return [Broken(Link.READ, f"{writer} writes {wrote}; {reader} reads only {read}: nothing is captured",
                           writer, reader)], []
        unset = sorted(capture.flags - flags)
        if unset and capture.alone(attrs) and not effect.unknown and \
                all(self._flag_never_set(served, dcls, effect, f) for f in unset):
            unset = []  # captures under the list alone; the captures under flags nothing sets never run
        if unset and capture.returns_aux and not effect.unknown:
            # the decoder captures a layer only where its flag is set: the list alone leaves those out
            if all(self._flag_never_set(served, dcls, effect, f) for f in unset):
                reader = capture.test or reader
                return [Broken(
                    Link.READ, f"{writer} writes {wrote}; {reader} captures a layer only where its per-layer "
                    f"flag {', '.join(unset)} is set, which nothing sets: the layers the engine "
                    f"names are not captured", writer, reader)], []
            return [], [f"{writer} does not set the per-layer flag {', '.join(unset)} that {capture.test or reader} "
                        f"reads; eaglelint cannot tell what else sets it"]
        marker = next(w for w in writes if (w.name in capture.flags if w.per_layer else w.name in capture.attrs))
        expected = capture.shift
        marks = [w for w in writes if (w.name in capture.flags if w.per_layer else w.name in capture.attrs)
                 and not w.empty]
        shifted = [w for w in marks if w.offset is not None and expected is not None and w.offset != expected]
        if len(shifted) < len(marks):
            # some path writes the ids as the decoder needs (`if layer_ids[0] == 1:` picks it by the
            # ids the draft names): no proof that the draft gets the wrong layers
            shifted = []
        if shifted and capture.returns_aux:
            w = shifted[0]
            return [Broken(Link.READ, f"{w.place} writes the engine's layer ids plus {w.offset} to {obj}; "
                                      f"{capture.test or capture.place} {capture.placement_text}, so id k must be "
                                      f"written as {plus('k', expected or 0)}: the draft gets the wrong layers",
                           w.place, capture.test or capture.place)], []
        if not capture.returns_aux:
            return [Broken(
                Link.RETURN, f"{marker.place} turns capture on in {obj} ({dcls.qualname}), but {capture.why}: "
                f"nothing reaches the logits processor", marker.place, reader)], []
        broken, reasons = self._gates(served, dpath, dcls, effect, marker, capture)
        return broken, reasons if broken else [*reasons, *_unread_ids(marks, obj)]

    def _shared_reasons(self, served: ClassEntity, effect: SetterEffect, capture: DecoderCapture) -> list[str]:
        """`self.ids = self.model.layers_to_capture` in __init__, then `self.ids[:] = ...` in the
        member: a change in place of a list that may be the decoder's own."""
        shared = next((w for w in effect.writes if w.in_place and self._shared(served, w)), None)
        if shared is None:
            return []
        return [f"{shared.place} changes self.{'.'.join((*shared.path, shared.name))} in place, which holds a list "
                f"taken from elsewhere: it may be the one {capture.place} reads"]

    def _shared(self, served: ClassEntity, write: Write) -> bool:
        """The attribute a write changes in place is bound somewhere to what another object may
        hold too (an attribute of an object, an item, a parameter), not only to a list made there."""
        return any(v.kind not in _FRESH for c in self.classes_at(served, write.path, {})
                   for o in self.resolver.mro(c) for a in self.resolver.info(o).self_assigns.get(write.name, ())
                   for v in a.values)

    def _gates(self, served: ClassEntity, dpath: Path_, dcls: ClassEntity, effect: SetterEffect, marker: Write,
               capture: DecoderCapture) -> tuple[list[Broken], list[str]]:
        """Link e: the decoder returns aux only while its own attribute is set (`if self.return_aux:`);
        the member must set it, or something else eaglelint can see may."""
        obj = "self." + ".".join(dpath)
        for gate in sorted(capture.gates):
            if any(self.canonical(served, w.path) == dpath and w.name == gate and not w.per_layer and not w.empty
                   for w in effect.writes):
                continue
            if effect.unknown:
                return [], []
            if not self._never_set(served, dcls, effect, gate):
                return [], [f"{capture.place} returns aux hidden states only while self.{gate} is set, which "
                            f"{marker.place} does not set; eaglelint cannot tell what else sets it"]
            return [Broken(Link.RETURN, f"{capture.place} returns aux hidden states only while self.{gate} is set; "
                                        f"{marker.place} turns capture on in {obj} ({dcls.qualname}) but nothing sets "
                                        f"{obj}.{gate}: nothing reaches the logits processor", marker.place,
                           capture.place)], []
        return [], []

    def _members_lines(self, cls: ClassEntity) -> list[tuple[int, int]]:
        """The lines of cls's capture members (what the walk judges: a member that does not
        run for this class, an overridden one or another pack's, sets nothing)."""
        body = self.resolver.info(cls)
        starts = sorted(m.line for m in body.methods.values())
        return [(m.line, next((x for x in starts if x > m.line), body.end_line + 1))
                for name, m in body.methods.items() if name in _ENTRY_NAMES]

    def _body_text(self, cls: ClassEntity, members: bool = True) -> str | None:
        """The source of cls's class body (without its capture members' lines unless `members`),
        or None where it cannot be read."""
        try:
            lines = self.resolver.project.source(cls.path).text.splitlines()
        except SourceError:
            return None
        body = self.resolver.info(cls)
        skipped = [] if members else self._members_lines(cls)
        return "\n".join(line for i, line in enumerate(lines[body.line - 1:body.end_line], body.line)
                         if not any(a <= i < b for a, b in skipped))

    def _never_set(self, served: ClassEntity, holder: ClassEntity, effect: SetterEffect, attr: str,
                   also: tuple[ClassEntity, ...] = (), absent_ok: bool = False) -> bool:
        """Every assignment of `attr` in the bodies of the served class, the holder, the
        functions the member ran (and their bases) and `also` is the holder's own `self.<attr> =
        False/None` (a text search: an assignment through another object, setattr or a string
        naming it there keeps it undecided)."""
        mro = self.resolver.mro(holder)
        if any(attr in self.resolver.info(c).attrs or attr in self.resolver.info(c).methods for c in mro):
            return False
        falsy = [v for c in mro for a in self.resolver.info(c).self_assigns.get(attr, ()) for v in a.values
                 if not any(start <= a.line < end for start, end in self._members_lines(c))]
        if not (falsy or absent_ok) or not all(v.kind == "const" and v.name in ("None", "False", "0") for v in falsy):
            return False
        pattern = re.compile(rf"\.{re.escape(attr)}\s*(?::[^=\n]*)?=(?!=)|[\"']{re.escape(attr)}[\"']")
        # `getattr(layer, "flag", False)` names it as a string, to read it
        reads = re.compile(rf"\b(?:getattr|hasattr)\([^()\n]*?,\s*[\"']{re.escape(attr)}[\"']")
        found = 0
        for c in dict.fromkeys([*mro, *self.resolver.mro(served), *(p.cls for p in effect.calls), *also]):
            info = self.resolver.module(c.path)
            if info is None or c.qualname not in info.classes:
                continue
            text = self._body_text(c, members=False)
            if text is None:
                return False
            if attr in text:
                found += len(pattern.findall(text)) - len(reads.findall(text))
        return found <= len(falsy)

    def _flag_never_set(self, served: ClassEntity, decoder: ClassEntity, effect: SetterEffect, flag: str) -> bool:
        """A per-layer flag that its layer classes set only to False/None, and that no body of
        the decoder's classes names outside their capture members (`_never_set` on each layer
        class, the decoder's classes searched too). One the decoder reads as `getattr(layer,
        "flag", False)` may also be assigned nowhere: absent, it reads False."""
        layers = self.layer_classes(decoder)
        soft = flag in self.decoder(decoder).soft_flags
        return bool(layers) and all(self._never_set(served, layer, effect, flag, tuple(self.resolver.mro(decoder)),
                                                    absent_ok=soft) for layer in layers)

    def _links_fg(self, served: ClassEntity, dpath: Path_, dcls: ClassEntity, bound: dict[Path_, ClassEntity],
                  effect: SetterEffect, where: Place) -> tuple[list[Broken], list[str]]:
        """Links f and g on the object nearest above the decoder that makes logits (the served
        object, or a whole model it holds): its forward unpacks the decoder's tuple under a test
        the member makes true, once, and hands the aux states to its logits processor."""
        for k in range(len(dpath) - 1, -1, -1):
            prefix = dpath[:k]
            classes = [c for c in self.classes_at(served, prefix, bound) if self.generates(c)]
            if classes:
                break
        else:
            return [], []
        if classes[0] not in self._served_forwards:
            found = self._logits_forward(classes[0])
            self._served_forwards[classes[0]] = (*found, _ServedForward(found[1])) if found else None
        read = self._served_forwards[classes[0]]
        if read is None:
            return [], [f"no forward of {classes[0].qualname} that calls self.{LOGITS} can be read"]
        defined, fn, reading = read
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        capture = self.decoder(dcls)
        if capture.boxed and not reading.unpacks:
            return self._boxed_fg(capture, reading, place, prefix, (served, classes[0], effect), where)
        if capture.boxed:
            return [], [f"{place} unpacks what the decoder returns inside an object; eaglelint does not follow that"]
        guarded = [u for u in reading.unpacks if u.tests]  # an unconditional one takes apart something else
        if not guarded:
            return [], [f"{place} unpacks no tuple under a test eaglelint can see before its logits processor"]
        holder = (served, classes[0], effect)
        truths = [self._tests_truth(u.tests, prefix, holder) for u in guarded]
        if all(t is False for t in truths):
            first = guarded[0]
            tested = ast.unparse(first.tests[-1]) if first.tests else "its test"
            return [Broken(Link.UNPACK, f"{place} unpacks the decoder's tuple only when {tested}, which {where} does "
                                        f"not leave true: the logits processor gets a tuple", where,
                           Place(defined, first.line, place.what))], []
        if None in truths:
            return [], [f"{place} unpacks the decoder's tuple under a test eaglelint cannot decide"]
        running = [u for u, t in zip(guarded, truths, strict=True) if t]
        twice = reading.unpacked_twice(running)
        if twice is not None:
            return [Broken(Link.PASS, f"{place} unpacks {twice.source} a second time (line {twice.line}), after it "
                                      f"was unpacked: the second unpack takes the hidden-state tensor apart", where,
                           Place(defined, twice.line, place.what))], []
        first = running[0]  # the decoder's tuple; a later unpack takes apart one of its items
        passed = reading.reaches_logits(first.aux)
        if passed is False:
            return [Broken(Link.PASS, f"{place} unpacks the aux hidden states into {first.aux} (line {first.line}) and "
                                      f"calls self.{LOGITS} without them: the draft gets no aux states", where,
                           Place(defined, first.line, place.what))], []
        if passed is None:
            return [], [f"{place} hands {first.aux} to what eaglelint does not follow before its logits processor"]
        reached = [c for c, tests in reading.logits_calls() if self._tests_truth(tests, prefix, holder) is not False]
        other = next((c for c in reached if not reading.gives_itself(c, first.aux)), None)
        if other is not None:
            return [], [f"{place} calls self.{LOGITS} (line {other.lineno}) with something other than {first.aux} "
                        f"where the aux hidden states go, on a path eaglelint cannot rule out"]
        return [], []

    def _boxed_fg(self, capture: DecoderCapture, reading: _ServedForward, place: Place, prefix: Path_,
                  holder: _Holder, where: Place) -> tuple[list[Broken], list[str]]:
        """Links f and g where the decoder returns an object (`output.aux_hidden_states`)."""
        if not capture.aux_fields:
            return [], [f"{capture.place} returns aux inside an object whose fields eaglelint cannot read"]
        reads = reading.field_reads(capture.aux_fields)
        names = ", ".join(sorted(capture.aux_fields))
        if not reads:
            return [], [f"{place} reads no field {names} of the decoder's output that eaglelint can see"]
        truths = [self._tests_truth(tests, prefix, holder) for _, tests, _ in reads]
        if all(t is False for t in truths):
            return [Broken(
                Link.UNPACK, f"{place} reads the decoder's {names} only when {ast.unparse(reads[0][1][-1])}, "
                f"which {where} does not leave true: the draft gets no aux states", where,
                Place(place.cls, reads[0][0].lineno, place.what))], []
        if None in truths:
            return [], [f"{place} reads the decoder's {names} under a test eaglelint cannot decide"]
        passed = [True if inside else reading.reaches_logits(target) if target else None
                  for (_, _, target), inside in zip(reads, (reading.in_logits(n) for n, _, _ in reads), strict=True)]
        if True in passed:
            return [], []
        if None in passed:
            return [], [f"{place} hands the decoder's {names} to what eaglelint does not follow"]
        return [Broken(Link.PASS, f"{place} reads the decoder's {names} and calls self.{LOGITS} without it: the draft "
                                  f"gets no aux states", where, Place(place.cls, reads[0][0].lineno, place.what))], []

    def _tests_truth(self, tests: tuple[ast.AST, ...], prefix: Path_, holder: _Holder) -> bool | None:
        """Whether the tests a statement of the served forward sits under hold once the member ran."""
        out: bool | None = True
        for test in tests:
            truth = self._flag_truth(test, prefix, holder)
            if truth is False:
                return False
            if truth is None:
                out = None
        return out

    def _flag_truth(self, test: ast.AST, prefix: Path_, holder: _Holder) -> bool | None:
        """A served forward's test once the member ran (the flags it set, the engine's truths)."""
        return combined(test, lambda t: self._flag_leaf(t, prefix, holder))

    def _flag_leaf(self, test: ast.AST, prefix: Path_, holder: _Holder) -> bool | None:
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[1], ast.Name) and test.args[1].id in ("tuple",
                                                                                                     "list"):
            return True  # the decoder returns its tuple (link e holds)
        obj, attr = (test.value, test.attr) if isinstance(test, ast.Attribute) else (None, None)
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "getattr" \
                and len(test.args) in (2, 3) and _const(test.args[1]) \
                and (len(test.args) == 2 or isinstance(test.args[2], ast.Constant) and not test.args[2].value):
            obj, attr = test.args[0], _const(test.args[1])  # `getattr(self.model, "flag", False)`: absent is off
        path = self_path(obj, {"self": ()}) if obj is not None else None
        if path is not None and attr:
            served, cls, effect = holder
            writes = [w for w in effect.writes if w.path == prefix + path and w.name == attr and not w.per_layer]
            last = _last_truth(writes)
            if last is True or last is False and not effect.unknown:
                return last
            if path:
                return None  # on an object it holds: what else sets it is not searched
            if effect.unknown or writes or not self._never_set(served, cls, effect, attr):
                return None  # set where eaglelint cannot see (`self.use_aux = config.eagle`), or unknown
            return False
        return _engine_truths().truth(test)

    def logits_without_aux(self, served: ClassEntity) -> Place | None:
        """Where the served forward makes its logits with no aux hidden states on every path:
        each of its calls of the engine's LogitsProcessor passes nothing, or a literal None,
        where the aux hidden states go, and nothing else there can make logits. Then no
        capture can reach the draft, whatever the decoder collects. None where that cannot be
        shown (its processor is another class, a call passes `*args`, a helper of its own makes
        logits or a LogitsProcessorOutput is built there)."""
        found = self._logits_forward(served)
        if found is None or not self._engine_processor(served):
            return None
        defined, fn = found
        calls: list[ast.Call] = []
        for node in nodes_of(fn):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == LOGITS:
                if not (isinstance(func.value, ast.Name) and func.value.id == "self"):
                    return None  # another object's processor (self.language_model.logits_processor)
                calls.append(node)
            elif (isinstance(func, ast.Name) and func.id == _LOGITS_OUTPUT
                  or isinstance(func, ast.Attribute) and func.attr == _LOGITS_OUTPUT):
                return None  # builds the output itself: its hidden states may be the aux ones
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
                helper = self.resolver.find_member(served, func.attr)
                if helper is not None and helper.function is not None and self._makes_logits(helper):
                    return None  # a method of its own that makes logits: another path
        if not calls or not all(_no_aux(c) for c in calls):
            return None
        return Place(defined, calls[0].lineno, f"{defined.qualname}.forward")

    def _makes_logits(self, member: Member) -> bool:
        fn = self.owners.method_node(member.owner, member.function.name) if member.function else None
        return fn is None or any(isinstance(n, ast.Attribute) and n.attr == LOGITS or isinstance(n, ast.Name)
                                 and n.id == _LOGITS_OUTPUT for n in nodes_of(fn))

    def _engine_processor(self, served: ClassEntity) -> bool:
        """Every value self.logits_processor is given (the assignments first up the MRO; None
        aside) is the engine's LogitsProcessor, imported from its module."""
        owner = next((c for c in self.resolver.mro(served) if self.resolver.assigns(c, LOGITS)), None)
        if owner is None:
            return False
        mod = self.resolver.module(owner.path)
        values = [v for a in self.resolver.assigns(owner, LOGITS) for v in a.values
                  if not (v.kind == "const" and v.name == "None")]
        if mod is None or not values:
            return False
        for value in values:
            callee = value.args[0] if value.kind == "call" and value.args else None
            if callee is None or callee.kind == "item":  # `Optional[LogitsProcessor]`: an annotation
                if callee is not None:
                    continue
                return False
            bound = mod.names.get(callee.name, []) if callee.kind == "name" else []
            if not bound or not all(b.kind == "import" and b.attr == _ENGINE_PROCESSOR[1]
                                    and b.name.endswith(_ENGINE_PROCESSOR[0]) for b in bound):
                return False
        return True

    def _logits_forward(self, served: ClassEntity) -> tuple[ClassEntity, Fn] | None:
        """The forward in served's MRO that calls self.logits_processor (through super().forward)."""
        for c in self.resolver.mro(served):
            if not self.resolver.defines(c, "forward"):
                continue
            fn = self.owners.method_node(c, "forward", positions=True)
            if fn is None:
                return None
            nodes = nodes_of(fn)
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == LOGITS
                   for n in nodes):
                return c, fn
            if not any(isinstance(n, ast.Call) and _is_super_call(n, "forward") for n in nodes):
                return None
        return None


class _Walk:
    """One symbolic run of a capture member's body: writes, delegations, None handling.

    It runs as the engine calls the member: with a non-empty list of layer ids, or (`none`)
    with None. What it does not model and that touches the objects it tracks (the served
    object and what it holds, a layer, a local bound to one) ends the certainty: a reason in
    `out.unknown`, never a silent skip.
    """

    def __init__(self, chain: CaptureChainAnalysis, served: ClassEntity, defined: ClassEntity, path: Path_,
                 bound: dict[Path_, ClassEntity], out: SetterEffect, seen: set, depth: int,
                 env: dict[str, Path_], ids: set[str], place: Place, none: bool):
        self.chain, self.served, self.defined, self.path = chain, served, defined, path
        self.bound, self.out, self.seen, self.depth = bound, out, seen, depth
        self.env, self.place, self.none = env, place, none
        self.ids = set(ids)  # locals holding the layer ids, or a list made from them
        self.nones: set[str] = set(ids) if none else set()  # locals known None on this run
        self.empty: set[str] = set()  # locals known to be an empty collection on this run
        self.varargs: set[str] = set()  # a `*args` parameter whose first item is the layer ids
        self.none_attrs: set[Path_] = set()  # attributes this run set to None (`self.model.x = layer_ids`)
        self.offsets: dict[str, int] = {}  # ids locals (and loop variables over them): the engine's ids plus this
        self.loop_vars: set[str] = set()  # loop variables over the ids (each one id)
        self.loop_offsets: dict[str, int] = {}  # layer locals picked by an id: what that id adds
        self.layers: dict[str, Path_] = {}
        self.holders: set[str] = set()  # locals bound to something built from a tracked object
        self.built: dict[str, int] = {}  # lists made empty, then fed the ids one by one: the shift they add
        # loop variables over the ids -> the depth of undecided tests their loop's body runs at, where
        # that body leaves no iteration early (no break or continue): an append there runs once an id
        self.every_id: dict[str, int] = {}
        self.undecided = 0  # enclosing conditions the walk cannot decide
        self.aliases: dict[str, set[str]] = {}  # locals bound to the same list (`shifted = layer_ids`)
        self.cut = 0  # earlier undecided tests one of whose branches left: the rest runs on some paths only
        self.outer = 0  # undecided tests (and cuts) around the call that runs this walk

    def unknown(self, line: int, what: str) -> None:
        self.out.unknown.append(f"{self.place.what} ({Path(self.defined.path).name}:{line}) {what}")

    def block(self, stmts: list[ast.stmt]) -> bool:
        """Runs stmts; False once a statement always leaves (return, raise)."""
        cut = self.cut
        try:
            return all(self.stmt(s) for s in stmts)
        finally:
            self.cut = cut

    @property
    def certain(self) -> bool:
        """What runs here runs on every path of this run."""
        return self.undecided == 0 and self.cut == 0 and self.outer == 0

    def truth(self, value: ast.AST | None) -> bool | None:
        """A written value as a test on this run (`True`, `layer_ids is not None`), where known."""
        value = self.value(value)
        if value is None:
            return None
        if self.is_empty(value):
            return False
        if isinstance(value, ast.Constant):
            return bool(value.value)
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            return True  # not empty (is_empty above)
        if isinstance(value, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            return self.test(value)
        return None

    def stmt(self, s: ast.stmt) -> bool:
        if isinstance(s, ast.Raise):
            if self.undecided == 0:
                self.out.raises = self.out.raises or Place(self.defined, s.lineno, self.place.what)
            return False
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.expr(s.value)
            return False
        if isinstance(s, ast.If):
            self.expr(s.test)
            truth = self.test(s.test)
            if truth is True:
                return self.block(s.body)
            if truth is False:
                return self.block(s.orelse)
            self.undecided += 1
            a = self.block(s.body)
            b = self.block(s.orelse)
            self.undecided -= 1
            if not (a or _only_raises(s.body)) or not (b or _only_raises(s.orelse)):
                self.cut += 1  # `if cond: return`: what follows runs on some paths only
            return a or b
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.expr(s.iter)
            self.iterated(s.iter)
            if self.is_empty(s.iter):
                return self.block(s.orelse)
            self.bind_loop(s.target, s.iter)
            self.undecided += 1
            bound = [n.id for n in nodes_of(s.target) if isinstance(n, ast.Name) and n.id in self.loop_vars]
            if not any(isinstance(n, (ast.Break, ast.Continue)) for b in s.body for n in nodes_of(b)):
                self.every_id.update(dict.fromkeys(bound, self.undecided))
            self.block(s.body)
            for name in bound:
                self.every_id.pop(name, None)
            self.undecided -= 1
            self.block(s.orelse)
            return True
        if isinstance(s, ast.While):
            self.expr(s.test)
            self.undecided += 1
            self.block(s.body)
            self.undecided -= 1
            return True
        return self.compound(s)

    def compound(self, s: ast.stmt) -> bool:
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr)
            return self.block(s.body)
        if isinstance(s, ast.Try):
            ok = self.block(s.body)
            for h in s.handlers:
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
            return ok
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = s.value
            if value is not None:
                self.expr(value)
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                self.assign(t, None if isinstance(s, ast.AugAssign) else value, s.lineno, isinstance(s, ast.AugAssign))
            return True
        if isinstance(s, ast.Expr):
            self.expr(s.value)
            return True
        if isinstance(s, (ast.Pass, ast.Break, ast.Continue, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
                          ast.Assert)):
            return True
        if isinstance(s, ast.Delete):
            for t in s.targets:
                if self.tracked(t):
                    self.unknown(s.lineno, f"deletes {ast.unparse(t)}, which eaglelint does not follow")
            return True
        if self.tracked(s):
            self.unknown(s.lineno, f"runs a {type(s).__name__} statement eaglelint does not follow")
        return True

    # -- values ------------------------------------------------------------
    def is_none(self, node: ast.AST | None) -> bool:
        """Known None on this run (only a run with None knows a value is None)."""
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.Attribute):
            return self_path(node, self.env) in self.none_attrs
        return isinstance(node, ast.Name) and node.id in self.nones

    def is_empty(self, node: ast.AST | None) -> bool:
        """Known None or an empty collection on this run: what a loop over it never enters."""
        if node is None:
            return False
        if isinstance(node, ast.Constant):
            return node.value is None
        if isinstance(node, ast.Name):
            return node.id in self.empty or node.id in self.nones
        if isinstance(node, ast.Attribute):
            return self.is_none(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return not node.elts
        if isinstance(node, ast.Dict):
            return not node.keys
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.is_empty(node.generators[0].iter)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            falsy = [self.is_empty(v) for v in node.values]
            return all(falsy)
        if isinstance(node, ast.IfExp):
            truth = self.test(node.test)
            return self.is_empty(node.body) if truth is True else self.is_empty(node.orelse) if truth is False \
                else self.is_empty(node.body) and self.is_empty(node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _COPIES:
            return self.is_empty(node.args[0]) if node.args else True  # list(ids), list()
        return False

    def value(self, node: ast.AST | None) -> ast.AST | None:
        """What `a or b` (`layer_ids or default`) evaluates to where the walk can tell."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            for v in node.values[:-1]:
                if self.is_empty(v):
                    continue
                return v if self.test(v) is True else node
            return self.value(node.values[-1])
        if isinstance(node, ast.IfExp):
            truth = self.test(node.test)
            return self.value(node.body) if truth is True else self.value(node.orelse) if truth is False else node
        return node

    def tracked(self, node: ast.AST) -> bool:
        """Mentions an object the chain follows: self and what it holds, a layer, a local bound to one."""
        return any(isinstance(n, ast.Name) and (n.id in self.env or n.id in self.layers or n.id in self.holders)
                   for n in nodes_of(node))

    def test(self, test: ast.AST) -> bool | None:
        """A condition's value on this run (the ids as passed, `hasattr` on what the object holds)."""
        return combined(test, self._leaf)

    def _leaf(self, test: ast.AST) -> bool | None:
        if isinstance(test, ast.Name) and (test.id in self.nones or test.id in self.empty):
            return False
        if isinstance(test, ast.Name) and test.id in self.ids and not self.none:
            return True  # the engine's list is not empty
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None:
            name = test.left.id
            if name not in self.nones and name not in self.ids and name not in self.empty:
                return None
            return (name in self.nones) == isinstance(test.ops[0], ast.Is)
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
                and len(test.args) == 2 and _const(test.args[1]):
            path = self_path(test.args[0], self.env)
            if path is not None:
                classes = self.chain.classes_at(self.served, path, self.bound)
                if classes:
                    has = {self.chain.resolver.find_member(c, _const(test.args[1]) or "") is not None
                           for c in classes}
                    return has.pop() if len(has) == 1 else None
        return _engine_truths().truth(test)

    # -- loops and names ---------------------------------------------------
    def bind_loop(self, target: ast.AST, it: ast.AST) -> None:
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "reversed") \
                and it.args:
            inner = it.args[0]
            if it.func.id == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                self.forget(target.elts[0])
                self.bind_loop(target.elts[1], inner)
                return
            it = inner
        layer = self._iter_layers(it)
        for n in nodes_of(target):
            if isinstance(n, ast.Name):
                self.forget(n)
        if isinstance(target, ast.Name) and (offset := self.offset(it)) is not None:
            self.offsets[target.id] = offset
            self.loop_vars.add(target.id)
        if layer is not None and isinstance(target, ast.Name):
            self.layers[target.id] = layer
        elif self.tracked(it) and not self._known_data(it):
            for n in nodes_of(target):
                if isinstance(n, ast.Name):
                    self.holders.add(n.id)

    def _known_data(self, node: ast.AST) -> bool:
        """An attribute of a tracked object that holds plain data (`self.config.x`, the ids)."""
        return isinstance(node, ast.Name) and node.id in self.ids

    def forget(self, name: ast.AST) -> None:
        if isinstance(name, ast.Name):
            for bag in (self.ids, self.nones, self.empty, self.holders, self.varargs):
                bag.discard(name.id)
            self.offsets.pop(name.id, None)
            self.built.pop(name.id, None)
            self.env.pop(name.id, None)
            self.layers.pop(name.id, None)
            for other in self.aliases.pop(name.id, set()):
                self.aliases.get(other, set()).discard(name.id)

    def changed(self, name: str, call: ast.Call | None) -> None:
        """A local updated in place (`out.append(x)`, `out[k] = x`): what the walk knew of its
        contents (empty, the ids plus an offset) no longer holds. A list made empty and then
        fed only the ids one by one (`for val in ids: out.append(val + 1)`) holds the ids plus
        that shift, as `[val + 1 for val in ids]` does."""
        shift = None
        if call is not None and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                and len(call.args) == 1 and not call.keywords and (name in self.empty or name in self.built):
            shift = next((self.offsets[v] + s for v in self.loop_vars if v in self.offsets
                          and self.every_id.get(v) == self.undecided  # not under a test of its own
                          and (s := _shift(call.args[0], v)) is not None), None)
        if call is not None and any(self._from_ids(a) or any(isinstance(n, ast.Name) and n.id in self.loop_vars
                                                              and n.id in self.offsets for n in nodes_of(a))
                                    for a in call.args):
            self.ids.add(name)  # fed the ids, or values built from them: what it holds is built from them
        if shift is not None and name in self.empty:
            self.built[name] = shift
        elif shift is None or self.built.get(name) != shift:
            self.built.pop(name, None)
        self.empty.discard(name)
        self.offsets.pop(name, None)
        if name in self.built:
            self.offsets[name] = self.built[name]
        for other in self.aliases.get(name, ()):  # the same list under another name: changed as well
            for bag in (self.ids, self.empty):
                bag.discard(other)
                if name in bag:
                    bag.add(other)
            for known in (self.offsets, self.built):
                known.pop(other, None)
                if name in known:
                    known[other] = known[name]

    def _iter_layers(self, node: ast.AST) -> Path_ | None:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            node = node.value  # `self.model.layers[start:end]`: still the decoder's layers
        path = self_path(node, self.env)
        if path and path[-1] == LAYER_CONTAINER:
            return path[:-1]
        return None

    def iterated(self, node: ast.AST) -> None:
        """A None argument fails where it is iterated (a loop, `list(...)`, `len(...)`): on every
        path of the run, a failure; on some paths only, not known."""
        if self.out.none_fails is None and self.none and self.is_none(node):
            line = getattr(node, "lineno", self.place.line)
            if self.certain:
                self.out.none_fails = Place(self.defined, line, self.place.what)
            else:
                self.unknown(line, "iterates the layer ids, which may be None there, under a test eaglelint "
                                   "cannot decide")

    def assign(self, target: ast.AST, value: ast.AST | None, line: int, augmented: bool = False) -> None:
        if isinstance(target, ast.Name):
            self.bind_name(target, value)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.assign(t, None, line)
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, None, line)
            return
        self.write(target, value, line, augmented)

    def bind_name(self, target: ast.Name, value: ast.AST | None) -> None:
        """A local bound again: what the walk knows of its new value (read before the name is
        forgotten: `layer_ids = layer_ids or []` reads the old one)."""
        if value is None:
            self.forget(target)
            return
        value = self.value(value) or value
        path = self_path(value, self.env)
        if isinstance(value, ast.Name) and value.id in self.holders:
            path = None
        layer = _layer_object(value, self.env, self.layers)
        layer_offset = self.layer_offset(value) if layer is not None else None
        kind = "none" if self.is_none(value) else "empty" if self.is_empty(value) else \
            "ids" if self._from_ids(value) else "holder" if self.tracked(value) and not self._reads_data(value) \
            else ""
        offset = self.offset(value) if kind == "ids" else None
        self.forget(target)
        if isinstance(value, ast.Name) and value.id != target.id and value.id not in self.env:
            # a second name for the same list: a change through either is a change of both
            group = {value.id, *self.aliases.get(value.id, ())}
            for name in group:
                self.aliases.setdefault(name, set()).add(target.id)
            self.aliases[target.id] = group
        if path is not None:
            self.env[target.id] = path
        elif layer is not None:
            self.layers[target.id] = layer
            if layer_offset is not None:
                self.loop_offsets[target.id] = layer_offset
        elif kind:
            {"none": self.nones, "empty": self.empty, "ids": self.ids, "holder": self.holders}[kind].add(target.id)
            if offset is not None:
                self.offsets[target.id] = offset

    def write(self, target: ast.AST, value: ast.AST | None, line: int, augmented: bool) -> None:
        """An attribute or item assignment: a write the chain reads, or what ends its certainty."""
        place = Place(self.defined, line, self.place.what)
        empty = value is not None and not augmented and self.is_empty(self.value(value))
        if empty and self.none and self.is_none(self.value(value)) and self.tracked(target):
            # None may be the decoder's "default layers": what it makes of None is not read
            self.unknown(line, f"writes None to {ast.unparse(target)}")
        if isinstance(target, ast.Subscript):
            if isinstance(target.value, ast.Name):
                self.changed(target.value.id, None)
            path = self_path(target.value, self.env)
            if path:
                # `self.model.layers_to_capture[:] = ids`, `self.model.capture[i] = True`: in place
                whole = isinstance(target.slice, ast.Slice) and not (target.slice.lower or target.slice.upper
                                                                      or target.slice.step)
                self.out.writes.append(Write(path[:-1], path[-1], False, place, empty,
                                             self.offset(value) if whole and not augmented else None,
                                             value is not None and self._from_ids(value), in_place=True))
            elif self.tracked(target.value):
                self.unknown(line, f"writes through {ast.unparse(target)}, which eaglelint does not follow")
            return
        if not isinstance(target, ast.Attribute):
            return
        layer = _layer_object(target.value, self.env, self.layers)
        if layer is not None:
            self.out.writes.append(Write(layer, target.attr, True, place, empty, self.layer_offset(target.value)))
            return
        path = self_path(target.value, self.env)
        if path is not None:
            classes = self.chain.classes_at(self.served, path, self.bound)
            if classes and all(self.chain.read_only(c, target.attr) for c in classes):
                self.out.read_only.append((place, ast.unparse(target)))
            self.out.writes.append(Write(path, target.attr, False, place, empty,
                                         self.offset(value) if value is not None and not augmented
                                         and not _one_shot(self.value(value)) else None,
                                         value is not None and self._from_ids(value),
                                         truth=None if augmented else self.truth(value), certain=self.certain))
            if value is not None and not augmented and self.is_none(self.value(value)):
                self.none_attrs.add((*path, target.attr))
            else:
                self.none_attrs.discard((*path, target.attr))
        else:
            self.unknown(line, f"writes {ast.unparse(target)} on an object eaglelint cannot place")

    def offset(self, value: ast.AST | None) -> int | None:
        """What a list of layer ids adds to the engine's: `ids` 0, `[i + 1 for i in ids]` 1; None otherwise."""
        value = self.value(value)
        if isinstance(value, ast.Name):
            return self.offsets.get(value.id)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _COPIES \
                and len(value.args) == 1:
            return self.offset(value.args[0])
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(value.generators) == 1 \
                and isinstance(value.generators[0].target, ast.Name) and not value.generators[0].ifs:
            base = self.offset(value.generators[0].iter)
            shift = _shift(value.elt, value.generators[0].target.id)
            return None if base is None or shift is None else base + shift
        return None

    def layer_offset(self, node: ast.AST) -> int | None:
        """`self.model.layers[i + 1]` with i looping over the ids: what it adds to the engine's id."""
        if isinstance(node, ast.Name) and node.id in self.layers:
            return self.loop_offsets.get(node.id)
        if not isinstance(node, ast.Subscript):
            return None
        for name, offset in self.offsets.items():
            if name in self.loop_vars:
                shift = _shift(node.slice, name)
                if shift is not None:
                    return offset + shift
        return None

    def _from_ids(self, value: ast.AST) -> bool:
        """Built from the layer ids (`[i + 1 for i in ids]`, `ids or default`, `list(ids)`)."""
        return any(isinstance(n, ast.Name) and n.id in self.ids for n in nodes_of(value))

    def _reads_data(self, value: ast.AST) -> bool:
        """A number or a string read off a tracked object (`self.config.num_hidden_layers // 2`)."""
        return isinstance(value, (ast.BinOp, ast.Compare, ast.JoinedStr, ast.Constant, ast.UnaryOp)) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in (*_PURE, *_COPIES))

    # -- calls -------------------------------------------------------------
    def expr(self, node: ast.AST) -> None:
        nodes = nodes_of(node)
        skipped, maybe = self._short_circuits(nodes) if any(isinstance(n, (ast.BoolOp, ast.IfExp)) for n in nodes) \
            else (set(), set())
        for n in nodes:
            if id(n) in skipped:
                continue
            self.undecided += id(n) in maybe
            if isinstance(n, ast.comprehension):
                self.iterated(n.iter)
            elif isinstance(n, ast.Call):
                self.call(n)
            elif isinstance(n, ast.NamedExpr):
                self.assign(n.target, n.value, n.lineno)
            self.undecided -= id(n) in maybe

    def _short_circuits(self, nodes: list[ast.AST]) -> tuple[set[int], set[int]]:
        """Of an expression's nodes (`nodes_of`), those that do not run on this run (`ids is not
        None and len(ids)` with None: the `len`), and those that run on some paths only (after an
        operand, or in a branch of a conditional expression, that the walk cannot decide)."""
        skipped: set[int] = set()
        maybe: set[int] = set()
        for n in nodes:
            if id(n) in skipped:
                continue
            if isinstance(n, ast.BoolOp):
                ends = not isinstance(n.op, ast.And)  # the operand value that ends it
                for i, value in enumerate(n.values[:-1]):
                    truth = self.test(value)
                    if truth is ends:
                        skipped.update(id(m) for rest in n.values[i + 1:] for m in nodes_of(rest))
                        break
                    if truth is None:
                        maybe.update(id(m) for rest in n.values[i + 1:] for m in nodes_of(rest))
                        break
            elif isinstance(n, ast.IfExp):
                truth = self.test(n.test)
                branches = {True: n.orelse, False: n.body}  # the branch each truth leaves out
                if truth is None:
                    maybe.update(id(m) for b in (n.body, n.orelse) for m in nodes_of(b))
                else:
                    skipped.update(id(m) for m in nodes_of(branches[truth]))
        return skipped, maybe

    def call(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr not in _READS:
            self.changed(func.value.id, call)  # `shifted.append(val + 1)`: the local is no longer as bound
        if isinstance(func, ast.Name):
            self.plain_call(call, func.id)
            return
        if not isinstance(func, ast.Attribute):
            if self.tracked(call):
                self.unknown(call.lineno, f"calls {ast.unparse(func)}, which eaglelint does not follow")
            return
        if _is_super_call(call, func.attr):
            target = self.chain._callee(self.served if not self.path else self._cls_here(), self.defined,
                                        ("super", func.attr))
            if target is not None:
                node = self.chain.owners.method_node(target[0], func.attr, positions=True)
                self.follow(node, target[0], f"{target[0].qualname}.{func.attr}", self.path, call, call.lineno)
            elif self._passes_tracked(call):
                self.unknown(call.lineno, f"calls super().{func.attr}, which eaglelint cannot find")
            return
        layer = _layer_object(func.value, self.env, self.layers)
        if layer is not None:
            self.unknown(call.lineno, f"calls {ast.unparse(func)} on a layer, which eaglelint does not follow")
            return
        path = self_path(func.value, self.env)
        if path is None:
            if self._passes_tracked(call) or self.tracked(func.value):
                self.unknown(call.lineno, f"calls {ast.unparse(func)}, which eaglelint does not follow")
            return
        self.method_call(call, func.attr, path)

    def method_call(self, call: ast.Call, name: str, path: Path_) -> None:
        classes = self.chain.classes_at(self.served, path, self.bound)
        members = [self.chain.resolver.find_member(cls, name) for cls in classes]
        if path and name in _ENTRY_NAMES and classes and all(m is None for m in members):
            # every class the object may be lacks it (where only some do, the member rules say so)
            where = Place(self.defined, call.lineno, self.place.what)
            self.out.missing.append((where, "self." + ".".join(path) + "." + name, classes[0]))
            return
        if not classes:
            if path and name in _MUTATORS:  # `self.model.layers_to_capture.extend(ids)`: the list in place
                empty = name == "clear" or (name in ("extend", "update") and bool(call.args)
                                            and self.is_empty(call.args[0]))
                refill = name in ("extend", "update") and len(call.args) == 1 and not empty
                self.out.writes.append(Write(path[:-1], path[-1], False,
                                             Place(self.defined, call.lineno, self.place.what), empty,
                                             self.offset(call.args[0]) if refill else None,
                                             any(self._from_ids(a) for a in call.args),
                                             partial=not (empty or refill), in_place=True))
            elif self._passes_tracked(call) or name not in _READS:
                self.unknown(call.lineno, f"calls self.{'.'.join((*path, name))}, whose class eaglelint "
                                          f"cannot tell")
            return
        for cls, member in zip(classes, members, strict=True):
            if member is None:
                if self._passes_tracked(call) or self.chain.resolver.info(cls).getattr_forwards is not None:
                    self.unknown(call.lineno, f"calls self.{'.'.join((*path, name))}, which {cls.qualname} "
                                              f"does not define in the scanned tree")
                continue
            node, owner, what = self.chain.member_function(cls, member, name)
            if node is None:
                self.unknown(call.lineno, f"calls self.{'.'.join((*path, name))}, which eaglelint cannot read")
                continue
            self.follow(node, owner, what, path, call, call.lineno)

    def plain_call(self, call: ast.Call, name: str) -> None:
        if name == "setattr" and len(call.args) >= 2:
            attr = _const(call.args[1])
            place = Place(self.defined, call.lineno, self.place.what)
            empty = len(call.args) > 2 and self.is_empty(call.args[2])
            layer = _layer_object(call.args[0], self.env, self.layers)
            path = self_path(call.args[0], self.env)
            if attr is None and self.tracked(call.args[0]):
                self.unknown(call.lineno, "calls setattr with a name eaglelint cannot read")
            elif layer is not None:
                self.out.writes.append(Write(layer, attr or "", True, place, empty, self.layer_offset(call.args[0])))
            elif path is not None:
                self.out.writes.append(Write(path, attr or "", False, place, empty,
                                             truth=self.truth(call.args[2]) if len(call.args) > 2 else None,
                                             certain=self.certain))
            elif self.tracked(call.args[0]):
                self.unknown(call.lineno, f"calls setattr on {ast.unparse(call.args[0])}, which eaglelint "
                                          f"cannot place")
            return
        if name in _ITERATES:
            for a in call.args:
                self.iterated(a)
        if name in _PURE or name in _ITERATES:
            return
        found = [e for e in self.chain.resolver.lookup(self.defined.path, name)
                 if isinstance(e, FunctionEntity) and e.defined_in is None]
        if len(found) == 1:
            node = self.chain.function_node(found[0])
            if node is not None:
                self.follow(node, self.defined, name, None, call, call.lineno, module_path=found[0].path)
                return
        if self._passes_tracked(call):
            self.unknown(call.lineno, f"calls {name}(...) with what it holds, which eaglelint cannot follow")

    def _passes_tracked(self, call: ast.Call) -> bool:
        return any(self.tracked(a) and not self._reads_data(a) for a in [*call.args, *(k.value for k in call.keywords)])

    def follow(self, fn: Fn | None, defined: ClassEntity, what: str, self_path: Path_ | None, call: ast.Call,
               line: int, module_path: str | None = None) -> None:
        """Runs a method (`self_path`: the object it is called on) or a module-level function
        with the call's arguments bound to its parameters."""
        if fn is None:
            self.unknown(line, f"calls {what}, which eaglelint cannot read")
            return
        key = (module_path or defined, what, self_path, self.none, tuple(ast.dump(a) for a in call.args))
        if key in self.seen:
            return
        if self.depth >= _DEPTH:
            self.unknown(line, f"calls {what} more than {_DEPTH} calls deep")
            return
        self.seen.add(key)
        owner = defined if module_path is None else ClassEntity(module_path, what)
        self.out.calls.append(Place(owner, fn.lineno, what))
        inner = _Walk(self.chain, self.served, owner, self_path or (), self.bound, self.out, self.seen,
                      self.depth + 1, {}, set(), Place(owner, fn.lineno, what), self.none)
        inner.outer = self.outer + self.undecided + self.cut
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        if self_path is not None and params:
            inner.env[params[0]] = self_path
            params = params[1:]
        args = list(call.args)
        if args and isinstance(args[-1], ast.Starred) and isinstance(args[-1].value, ast.Name) \
                and args[-1].value.id in self.varargs and not any(isinstance(a, ast.Starred) for a in args[:-1]):
            # `self.language_model.set_eagle3_layers_to_capture(*args)`: the engine's one argument
            args[-1] = ast.Name(id=args[-1].value.id, ctx=ast.Load())
            if len(args) <= len(params):
                inner.ids.add(params[len(args) - 1])
                if self.none:
                    inner.nones.add(params[len(args) - 1])
            args = args[:-1]
        elif any(isinstance(a, ast.Starred) for a in args):
            self.unknown(line, f"passes *args to {what}, which eaglelint does not follow")
            return
        by_name = {k.arg: k.value for k in call.keywords if k.arg}
        if any(k.arg is None for k in call.keywords) and self._passes_tracked(call):
            self.unknown(line, f"passes **kwargs to {what}, which eaglelint does not follow")
            return
        pairs = list(zip(params, args, strict=False))
        pairs += [(p, by_name[p]) for p in params if p in by_name]
        defaults = _defaults(fn)
        pairs += [(p, defaults[p]) for p in params[len(call.args):] if p not in by_name and p in defaults]
        for param, arg in pairs:
            inner.bind(param, arg, self)
        inner.block(fn.body)

    def run(self, fn: Fn, static: bool = False) -> None:
        """The member itself, called by the engine with one argument: the layer ids (or None)."""
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        if params and not static:
            self.env[params[0]] = self.path
            params = params[1:]
        if params:
            self.ids.add(params[0])
            self.offsets[params[0]] = 0
            if self.none:
                self.nones.add(params[0])
        elif fn.args.vararg is not None:
            self.varargs.add(fn.args.vararg.arg)
        self.block(fn.body)

    def bind(self, param: str, arg: ast.AST, caller: _Walk) -> None:
        """A parameter bound to the caller's argument, as the caller knows it."""
        arg = caller.value(arg) or arg
        path = self_path(arg, caller.env)
        layer = _layer_object(arg, caller.env, caller.layers)
        if path is not None:
            self.env[param] = path
        elif layer is not None:
            self.layers[param] = layer
        elif caller.is_none(arg):
            self.nones.add(param)
        elif caller.is_empty(arg):
            self.empty.add(param)
        elif caller._from_ids(arg):
            self.ids.add(param)
            if (offset := caller.offset(arg)) is not None:
                self.offsets[param] = offset
        elif caller.tracked(arg) and not caller._reads_data(arg):
            self.holders.add(param)

    def _cls_here(self) -> ClassEntity:
        classes = self.chain.classes_at(self.served, self.path, self.bound)
        return classes[0] if classes else self.defined


def _reads_key(node: ast.AST, mapping: str, key: str) -> bool:
    """`mapping.get("key", ...)` or `mapping["key"]`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == mapping and node.args:
        return _const(node.args[0]) == key
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == mapping \
        and _const(node.slice) == key


def _ref_path(ref: Ref) -> Path_ | None:
    """`self.a` as ("a",), `self.a.b` as ("a", "b"); None for any other value."""
    if ref.kind == "self":
        return (ref.name,)
    if ref.kind == "attr" and len(ref.args) == 1 and ref.name:
        inner = _ref_path(ref.args[0])
        return (*inner, ref.name) if inner is not None else None
    return None


# a placement read off a decoder: where the capture sits, and the capture test's own offset
_PLACEMENT = re.compile(r"(before|after)([+-]\d+)?")


def placement_shift(placement: str) -> int | None:
    """What the engine's id k must become for a capture so placed: "before" k + 1, "after" k,
    with the capture test's own offset ("before-1": k); None where the placement is unknown."""
    found = _PLACEMENT.fullmatch(placement)
    if found is None:
        return None
    return (1 if found.group(1) == "before" else 0) + int(found.group(2) or 0)


def _site_text(placement: str) -> str:
    """"before the layer call", "after the layer call, for the layer i - 1", or where unknown."""
    found = _PLACEMENT.fullmatch(placement)
    if found is None:
        return "where eaglelint cannot tell"
    asks = f", for the layer {plus('i', int(found.group(2)))}" if found.group(2) else ""
    return f"{found.group(1)} the layer call{asks}"


def plus(name: str, offset: int) -> str:
    """`k`, `k + 1`, `k - 1`: a name shifted by an offset, as Python writes it."""
    return name if not offset else f"{name} {'+' if offset > 0 else '-'} {abs(offset)}"


def _shift(node: ast.AST, name: str) -> int | None:
    """`name` 0, `name + 1` 1, `name - 2` -2, `1 + name` 1; None for anything else."""
    if isinstance(node, ast.Name) and node.id == name:
        return 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = node.left, node.right
        if isinstance(right, ast.Constant) and isinstance(right.value, int) and _shift(left, name) is not None:
            step = right.value if isinstance(node.op, ast.Add) else -right.value
            return (_shift(left, name) or 0) + step
        if isinstance(node.op, ast.Add) and isinstance(left, ast.Constant) and isinstance(left.value, int) \
                and _shift(right, name) is not None:
            return left.value + (_shift(right, name) or 0)
    return None


@cache
def _engine_truths() -> NormalPath:
    """What SGLang's engine guarantees where a forward makes logits (rules/normal_path.toml),
    with no local known: read once, when a test first needs it."""
    return NormalPath(load_normal_truths("sglang"))


def _decorator_name(node: ast.AST) -> str:
    """`property`, `functools.cached_property` -> `cached_property`, `x.setter` -> `setter`."""
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _decorators(fn: Fn, member: Member) -> set[str]:
    """The last part of each decorator's name, from the syntax tree and the summary (a method's
    tree is read from its `def` line on, without them)."""
    names = {_decorator_name(d) for d in fn.decorator_list}
    if member.function is not None:
        names |= {d.split("(", 1)[0].rsplit(".", 1)[-1] for d in member.function.decorators}
    return names


_PROPERTIES = frozenset({"property", "cached_property", "setter"})
_KNOWN_DECORATORS = ("staticmethod", "property", "cached_property", "setter", "override", "no_type_check",
                     "torch_compile_guard")


def _defaults(fn: Fn) -> dict[str, ast.expr]:
    params = [*fn.args.posonlyargs, *fn.args.args]
    return {p.arg: d for p, d in zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults, strict=True)}


_COPIES = ("list", "tuple", "set", "sorted", "frozenset")
_ITERATES = (*_COPIES, "len", "enumerate", "zip", "sum", "any", "all", "max", "min", "iter", "reversed", "map",
             "filter", "dict")
_PURE = ("getattr", "hasattr", "isinstance", "issubclass", "print", "range", "int", "str", "repr", "bool", "float",
         "abs", "id", "type", "callable", "round", "format", "hash")
_MUTATORS = ("clear", "extend", "append", "insert", "update", "add", "remove", "pop", "discard", "sort", "reverse",
             "setdefault", "__setitem__")
# methods of an object of unknown class that only read (a logger's, a config's)
_READS = ("get", "keys", "values", "items", "index", "count", "copy", "info", "debug", "warning", "warning_once",
          "info_once", "error", "get_text_config", "is_last_rank", "is_first_rank", "startswith", "endswith",
          "format", "lower", "upper", "split", "join")


# what torch's nn.Module gives every module (beyond what its subclasses assign)
_MODULE_ATTRS = frozenset({
    "training", "forward", "modules", "children", "named_modules", "named_children", "parameters",
    "named_parameters", "buffers", "named_buffers", "state_dict", "load_state_dict", "to", "cuda", "cpu", "eval",
    "train", "apply", "half", "float", "double", "type", "zero_grad", "requires_grad_", "get_submodule",
    "get_parameter", "get_buffer", "extra_repr", "register_forward_hook", "register_forward_pre_hook",
    "_modules", "_parameters", "_buffers", "__class__", "__dict__",
})
# attributes where SGLang's models hold a decoder or a whole language model: a pre-filter for
# what to resolve (what the class held is decides)
_MODEL_HOLDERS = ("model", "language_model", "llm", "text_model", "transformer", "decoder", "thinker", "lm",
                  "backbone", "text_decoder", "model_body", "gpt_neox", "language_model_body")
_ENTRY_NAMES = (CAPTURE_HOOK, "set_dflash_layers_to_capture", "set_dspark_layers_to_capture")


def _builds_layers(ref: Ref) -> bool:
    """`nn.ModuleList(...)` or `make_layers(...)`: a stack of layers (`self.h`, `self.blocks`)."""
    if ref.kind != "call" or not ref.args:
        return False
    callee = ref.args[0]
    return (callee.name if callee.kind == "name" else callee.attr if callee.kind == "attr" and callee.attr
            else callee.name) in ("ModuleList", "make_layers")


def _of_self(node: ast.AST) -> bool:
    """`self.x` (a container the object holds)."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _constructs(func: ast.AST) -> bool:
    """`list()`, `dict()`, `AuxHiddenStateList()`, `AuxHiddenStatePacker(n)`: a new collection, not a computation."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in ("list", "dict", "OrderedDict") or name[:1].isupper()


class _ForwardReader:
    """One forward's capture tests and returns (no following of calls: the caller does that)."""

    def __init__(self, fn: ast.AST, aux_params: frozenset[str] = frozenset()):
        self.attrs: set[str] = set()
        self.flags: set[str] = set()
        self.passes: list[tuple[str, str]] = []  # ("super" | "self", method) whose result it returns
        self.returns_aux: bool | None = False
        self.gates: set[str] = set()  # self attributes an undecided test reads before aux is returned
        self.placements: dict[str, int] = {}  # where the capture sits, at the line it is first read
        self.boxed = False  # returns aux inside an object it builds (a NamedTuple, a dataclass)
        self.boxes: list[tuple[ast.Call, int | None, str | None]] = []  # the call, and where aux goes in
        self.helper_calls: list[ast.Call] = []
        self.helper = bool(aux_params)  # a helper handed the list: its caller's loop is not seen here
        self.repeats: set[str] = set()  # `range(N)` of a loop repeating the layers, read in unrolled ids
        # per capture: the self attributes and per-layer flags its own test reads, and whether it
        # sits in a loop (over the layers) or after it (the final state)
        self.tests: set[tuple[frozenset[str], frozenset[str], bool]] = set()
        self.soft_flags: set[str] = set()  # flags read as `getattr(layer, "flag", False)`: absent is unset
        self._loops: list[ast.For | ast.AsyncFor] | None = None  # the for loops of the forward, listed once
        # parts of a capture test that read a capture list otherwise than `i in self.<list>` or as
        # true whenever that holds (`self.<list>`, `len(self.<list>) > 0`): `len(self.<list>) > 2`
        self.odd: list[ast.AST] = []
        self.nodes = nodes_of(fn)  # one walk, read by every pass below
        assigned: dict[str, list[ast.AST]] = {}
        for n in self.nodes:
            if isinstance(n, ast.Assign):
                pairs = [(t, n.value) for t in n.targets]
            elif isinstance(n, ast.AnnAssign) and n.value is not None:
                pairs = [(n.target, n.value)]
            else:
                continue
            for t, value in pairs:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(value)
        self.assigned = assigned
        self.arguments: set[int] = set()  # ids of Name nodes handed to a call
        self.layer_locals = self._find_layer_locals(fn)
        fed = self._fed(fn)
        # a helper handed the list collects into that list (and what it hands on to it), not into
        # objects of its own it hands to calls (`state = HcState(h)`)
        self.aux = aux_params | (fed & self._fed_into(aux_params)) if aux_params else fed
        for n in self.nodes if aux_params else ():  # a helper handed the list gives it back as a capture target
            if isinstance(n, ast.Return) and n.value is not None:
                self.arguments |= {id(m) for m in nodes_of(n.value) if isinstance(m, ast.Name) and m.id in aux_params}
        # local functions that feed the list (`def capture_output(h): aux.capture(h)`), handed to layers
        self.feeders = {n.name for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and n is not fn and any(isinstance(m, ast.Attribute) and m.attr in _FEEDERS
                                                and isinstance(m.value, ast.Name) and m.value.id in self.aux
                                                for m in nodes_of(n))}
        self.test_line = 0
        if self.aux:  # nothing made fresh and fed: no capture test to read
            feeds = self._feeds(fn)
            for feed, tests in feeds:
                # the innermost test that reads a capture list or flag decides (one further in may
                # pick how to gather the state, one further out the rank or the batch)
                for test in reversed(tests):
                    attrs, flags = self._test_reads(test)
                    if attrs or flags:
                        self.attrs |= attrs
                        self.flags |= flags
                        self.tests.add((frozenset(attrs), frozenset(flags), bool(self._loops_around(feed))))
                        self.test_line = self.test_line or getattr(test, "lineno", 0)
                        break
            self._read_odd(feeds)
            # a local fed under no test that no return mentions (`zero_allocator` handed to each
            # layer) is no capture: it says nothing of where the capture sits
            self._place(feeds)
        for n in self.nodes:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id == "self" and n.func.attr != "forward":
                self.helper_calls.append(n)
        self.returns_aux = self._returns(fn)

    def _place(self, feeds: list[tuple[ast.AST, list[ast.AST]]]) -> None:
        """Where each feed captures, at the line it is first read."""
        returned = {m.id for n in self.nodes if isinstance(n, ast.Return) and n.value is not None
                    for m in nodes_of(n.value) if isinstance(m, ast.Name)}
        for feed, tests in feeds:
            if tests or self._fed_name(feed) in returned | self.feeders:
                self.placements.setdefault(self._placement(feed, tests), getattr(feed, "lineno", 0))

    def _fed(self, fn: ast.AST) -> set[str]:
        """Locals made empty (`[]`, `AuxHiddenStateList()`) that something appends to or hands
        to a layer as its capture target. One handed to some other call (`prepare(LayerCall(...))`)
        is a collection only where the forward hands it on to a layer or a method of its own,
        or gives it back."""
        out: set[str] = set()
        empty = {name for name, values in self.assigned.items() if any(
            (isinstance(v, ast.List) and not v.elts) or (isinstance(v, ast.Dict) and not v.keys)
            or (isinstance(v, ast.Call) and _constructs(v.func))
            for value in values for v in ((value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,)))}
        if not empty:
            return set()
        given = self._given_back()
        for n in self.nodes:
            if isinstance(n, ast.Attribute) and n.attr in _FEEDERS and isinstance(n.value, ast.Name):
                out.add(n.value.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name):
                out.add(n.value.id)  # `aux[layer_id] = hidden_states`: a dict or a list slot
            elif isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in ("len", "isinstance")):
                for a in [*n.args, *(k.value for k in n.keywords)]:
                    for v in (a.body, a.orelse) if isinstance(a, ast.IfExp) else (a,):
                        if isinstance(v, ast.Name):
                            if v.id in given or self._calls_layer(n) or _of_self(n.func):
                                out.add(v.id)
                            self.arguments.add(id(v))
        return out & empty

    def _given_back(self) -> set[str]:
        """Names a return mentions, and the names in what is assigned to them (`out = (h, aux)`)."""
        out = {m.id for n in self.nodes if isinstance(n, ast.Return) and n.value is not None
               for m in nodes_of(n.value) if isinstance(m, ast.Name)}
        todo = list(out)
        while todo:
            for value in self.assigned.get(todo.pop(), []):
                for m in nodes_of(value):
                    if isinstance(m, ast.Name) and m.id not in out:
                        out.add(m.id)
                        todo.append(m.id)
        return out

    def _fed_into(self, lists: frozenset[str]) -> set[str]:
        """The locals a helper collects first and then hands to the list it was given
        (`aux.extend(found)`, `aux += found`)."""
        out: set[str] = set()
        for n in self.nodes:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _FEEDERS \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in lists:
                out |= {a.id for a in n.args if isinstance(a, ast.Name)}
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in lists \
                    and isinstance(n.value, ast.Name):
                out.add(n.value.id)
        return out

    def _feeds(self, fn: ast.AST) -> list[tuple[ast.AST, list[ast.AST]]]:
        """Each place an aux local is fed, with the tests that guard it."""
        out: list[tuple[ast.AST, list[ast.AST]]] = []

        def visit(node: ast.AST, tests: list[ast.AST]) -> None:
            if isinstance(node, ast.If):
                visit(node.test, tests)
                for s in node.body:
                    visit(s, [*tests, node.test])
                for s in node.orelse:
                    visit(s, [*tests, node.test])
                return
            if isinstance(node, ast.IfExp):
                visit(node.body, [*tests, node.test])
                visit(node.orelse, [*tests, node.test])
                return
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not fn:
                return  # a local feeder counts where it is handed on
            if self._feeds_here(node):
                out.append((node, tests))
            for child in ast.iter_child_nodes(node):
                visit(child, tests)

        visit(fn, [])
        return out

    def _placement(self, feed: ast.AST, tests: list[ast.AST]) -> str:
        """"before" or "after" the layer call of the loop the feed sits in, where the feed's test
        asks about this iteration's layer (`i in self.layers_to_capture` with i the loop's index,
        or a flag of the loop's layer); "outside" for a feed in no loop (the final state,
        `self.end_layer in self.layers_to_capture`: it decides nothing against a loop's feed);
        "handed:<parameter>" (a keyword) or "handed:#<n>" (a position) where the capture target
        is handed to the layer call itself, for the layer's forward to decide; "" where not that
        plain (a layer call on each side of the capture, or several that it is handed to)."""
        line = getattr(feed, "lineno", 0)
        loops = self._loops_around(feed)
        if not loops and tests and (not self.helper or isinstance(feed, ast.Name)):
            return "outside"  # (in a helper, the list handed on or returned: its capture is judged where it is)
        if not loops or not tests:
            return ""
        loop = max(loops, key=lambda n: n.lineno)
        target = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
        names = {t.id for t in target if isinstance(t, ast.Name)}
        counted = _counted_from(loop)
        if counted is None:
            return ""  # `enumerate(self.layers, start)` with a start that is not read
        test = tests[-1]
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        # `i in self.layers_to_capture` asks about this layer; `i - 1 in ...` about the one before it;
        # with `enumerate(self.layers, 1)`, `i in ...` asks about the layer after the one it indexes
        asked = [shift + (counted[1] if n == counted[0] else 0) for part in parts
                 if isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.In)
                 for shift, n in [next(((_shift(part.left, n), n) for n in names
                                        if _shift(part.left, n) is not None), (None, ""))
                                  if not isinstance(part.left, ast.Name) or part.left.id in names
                                  else (self._unrolled(part.left.id, names, loops, loop), "")]
                 if shift is not None]
        flag = (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "getattr"
                and bool(test.args) and isinstance(test.args[0], ast.Name)
                and test.args[0].id in names | self.layer_locals) or (
            isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name)  # `layer._is_layer_to_capture`
            and test.value.id in self.layer_locals)
        if not flag and len(asked) != 1:
            return ""
        offset = f"{asked[0]:+d}" if asked and asked[0] else ""
        calls = [n for stmt in loop.body for n in nodes_of(stmt) if isinstance(n, ast.Call) and self._calls_layer(n)]
        if not calls:
            return ""
        if any(call.lineno <= line <= (call.end_lineno or 0) for call in calls):
            handed = self._handed(calls[0], feed) if len(calls) == 1 else ""
            return handed + offset if handed else ""
        # the layer may be called on several branches (`self.layers[i](...)` on one device,
        # `self.layers[i].forward_fused(...)` on another): the capture must sit on one side of them all
        if all(line < call.lineno for call in calls):
            return "before" + offset
        if all(line > (call.end_lineno or call.lineno) for call in calls):
            return "after" + offset
        return ""

    def _unrolled(self, local: str, names: set[str], loops: list[ast.For | ast.AsyncFor], loop: ast.AST) -> int | None:
        """`logical_id = loop_idx * num_layers + i; if logical_id in self.layers_to_capture`: the
        layers numbered across the repeats of an enclosing `for loop_idx in range(N)` (the ids
        span N times the layers); what the test adds to `i`, recording N in `self.repeats`."""
        values = self.assigned.get(local, [])
        if len(values) != 1 or not isinstance(values[0], ast.BinOp) or not isinstance(values[0].op, ast.Add):
            return None
        outer = [n for n in loops if n is not loop and isinstance(n.target, ast.Name) and isinstance(n.iter, ast.Call)
                 and isinstance(n.iter.func, ast.Name) and n.iter.func.id == "range" and len(n.iter.args) == 1]
        for mine, other in ((values[0].left, values[0].right), (values[0].right, values[0].left)):
            shift = next((_shift(mine, n) for n in names if _shift(mine, n) is not None), None)
            read = {m.id for m in nodes_of(other) if isinstance(m, ast.Name)}
            repeat = next((n for n in outer if getattr(n.target, "id", None) in read), None)
            if shift is not None and repeat is not None and not read & names and isinstance(other, ast.BinOp) \
                    and isinstance(other.op, ast.Mult):
                self.repeats.add(ast.unparse(repeat.iter.args[0]))  # type: ignore[attr-defined]
                return shift
        return None

    @staticmethod
    def _fed_name(feed: ast.AST) -> str:
        node = feed.value if isinstance(feed, (ast.Attribute, ast.Subscript)) else feed
        return node.id if isinstance(node, ast.Name) else ""

    def _handed(self, call: ast.Call, feed: ast.AST) -> str:
        """The capture target handed to the layer call: by which keyword or position."""
        inside = {id(n) for n in nodes_of(feed) if isinstance(n, ast.expr)}  # not the shared `Load()`
        for k in call.keywords:
            if k.arg and any(id(n) in inside for n in nodes_of(k.value)):
                return f"handed:{k.arg};"
        for i, a in enumerate(call.args):
            if not isinstance(a, ast.Starred) and any(id(n) in inside for n in nodes_of(a)):
                return f"handed:#{i};"
        return ""

    def _calls_layer(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute):  # `layer.forward(...)`, `self.layers[i].forward_fused(...)`
            func = func.value
        if isinstance(func, ast.Name):
            return func.id in self.layer_locals
        return isinstance(func, ast.Subscript) and _of_self(func.value) and isinstance(func.value, ast.Attribute) \
            and func.value.attr == LAYER_CONTAINER

    def _feeds_here(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr in _FEEDERS and isinstance(node.value, ast.Name):
            return node.value.id in self.aux
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name):
            return node.value.id in self.aux
        return isinstance(node, ast.Name) and (node.id in self.aux or node.id in self.feeders) \
            and isinstance(node.ctx, ast.Load) and id(node) in self.arguments

    def _loops_around(self, feed: ast.AST) -> list[ast.For | ast.AsyncFor]:
        """The for loops of the forward that hold the feed's line."""
        if self._loops is None:
            self._loops = [n for n in self.nodes if isinstance(n, (ast.For, ast.AsyncFor))]
        line = getattr(feed, "lineno", 0)
        return [n for n in self._loops if n.lineno <= line <= (n.end_lineno or 0)]

    def _read_odd(self, feeds: list[tuple[ast.AST, list[ast.AST]]]) -> None:
        """Each test around a feed that reads a capture list another way than asking for the layer."""
        owners = {id(n.test): n for n in self.nodes if isinstance(n, (ast.If, ast.IfExp))}
        for feed, tests in feeds:
            for test in tests:
                owner = owners.get(id(test))
                body = owner.body if isinstance(owner, ast.If) else [owner.body] if owner else []
                within = any(m is feed for b in body for m in nodes_of(b))  # else: fed where the test fails
                self.odd += self._odd_parts(test, self.attrs, within)

    def _odd_parts(self, test: ast.AST, attrs: set[str], holds: bool = True) -> list[ast.AST]:
        """The parts of a capture test (that must hold, or with `holds` False fail, where the
        capture runs) that read one of `attrs` in a way that is not read: anything but a
        membership test, or a test that holds wherever the layer is in the list (`self.<list>`,
        `len(self.<list>) > 0`, `self.<list> is not None`, or where the test must fail,
        `len(self.<list>) == 0`, `self.<list> is None`): `len(self.<list>) > 2` is not."""
        if isinstance(test, ast.BoolOp):
            return [p for v in test.values for p in self._odd_parts(v, attrs, holds)]
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._odd_parts(test.operand, attrs, not holds)
        if not self._reads_list(test, attrs):
            return []
        if isinstance(test, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in test.ops):
            return []
        if holds and self._is_list(test, attrs):
            return []
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant):
            left, op, right = test.left, test.ops[0], test.comparators[0].value
            if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" \
                    and len(left.args) == 1 and self._is_list(left.args[0], attrs):
                nonempty = (isinstance(op, (ast.Gt, ast.NotEq)) and right == 0 or isinstance(op, ast.GtE)
                            and right == 1)
                empty = isinstance(op, ast.Eq) and right == 0 or isinstance(op, ast.Lt) and right == 1
                if nonempty and holds or empty and not holds:
                    return []
            if isinstance(op, (ast.Is, ast.IsNot)) and right is None and self._is_list(left, attrs) \
                    and isinstance(op, ast.IsNot) == holds:
                return []
        return [test]

    def _is_list(self, node: ast.AST, attrs: set[str]) -> bool:
        """`self.<a>` for a in attrs, or a local every value of which is one."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return node.attr in attrs
        values = self.assigned.get(node.id, []) if isinstance(node, ast.Name) else []
        return bool(values) and all(self._is_list(v, attrs) for v in values)

    def _reads_list(self, node: ast.AST, attrs: set[str]) -> bool:
        """Mentions `self.<a>` for a in attrs, or a local bound to what does."""
        return any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
                   and n.attr in attrs or isinstance(n, ast.Name) and n.id in self.assigned
                   and any(self._is_list(v, attrs) for v in self.assigned[n.id]) for n in nodes_of(node))

    def _test_reads(self, test: ast.AST) -> tuple[set[str], set[str]]:
        """The self attributes and per-layer flags one capture test reads."""
        kept = self.attrs, self.flags
        self.attrs, self.flags = set(), set()
        try:
            self._reads(test, set())
            return self.attrs, self.flags
        finally:
            self.attrs, self.flags = kept

    def _reads(self, test: ast.AST, seen: set[str]) -> None:
        for n in nodes_of(test):
            if isinstance(n, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops):
                for c in n.comparators:  # `i in self.layers_to_capture`, or in a local bound to it
                    for v in self.assigned.get(c.id, []) if isinstance(c, ast.Name) else [c]:
                        self.attrs |= {a.attr for a in nodes_of(v) if isinstance(a, ast.Attribute)
                                       and isinstance(a.value, ast.Name) and a.value.id == "self"}
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" \
                    and len(n.args) >= 2 and _const(n.args[1]):
                target = n.args[0]
                if isinstance(target, ast.Name) and target.id == "self":
                    self.attrs.add(_const(n.args[1]) or "")
                else:
                    self.flags.add(_const(n.args[1]) or "")
                    if len(n.args) == 3 and isinstance(n.args[2], ast.Constant) and not n.args[2].value:
                        self.soft_flags.add(_const(n.args[1]) or "")
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id not in ("self",) \
                    and n.value.id in self._layer_names():
                self.flags.add(n.attr)
            elif isinstance(n, ast.Name) and n.id in self.assigned and n.id not in seen:
                seen.add(n.id)
                for value in self.assigned[n.id]:
                    self._reads(value, seen)

    def _layer_names(self) -> set[str]:
        """Locals that stand for one of the decoder's layers: `layer = self.layers[i]`, or the
        loop variable of `for layer in self.layers[a:b]` / `for i, layer in enumerate(self.layers)`."""
        return self.layer_locals

    def _find_layer_locals(self, fn: ast.AST) -> set[str]:
        out = {name for name, values in self.assigned.items()
               if any(isinstance(v, ast.Subscript) and _of_self(v.value) for v in values)}
        for n in self.nodes:
            if not isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                continue
            it, target = n.iter, n.target
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" and it.args:
                it = it.args[0]
                target = target.elts[-1] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(it, ast.Subscript):
                it = it.value
            if _of_self(it) and isinstance(target, ast.Name):
                out.add(target.id)
        return out

    def _returns(self, fn: ast.AST) -> bool | None:
        """Whether a return reached on the normal path hands back the aux list: in a tuple
        (`(h, aux)`, a local bound to one), or inside an object it builds (`Output(h, aux)`);
        None where aux goes back in a shape eaglelint does not read."""
        out: bool | None = False
        gated: list[set[str]] = []  # per return of aux: the attributes its tests read
        for reached in self._normal_path().returns(getattr(fn, "body", [])):
            for value, more in self._values(reached.ret.value):
                kind = self._aux_in(value)
                if kind is not None:
                    gated.append(self._gate([*reached.tests, *more]))
                if kind == "tuple":
                    out = True
                elif kind == "boxed":
                    self.boxed = True
                    out = True
                elif kind == "other" and out is False:
                    out = None
                self.passes += self._passed(value)
        if gated:  # a gate holds back every return of aux (Beam's fused path is one way out of two)
            self.gates |= set.intersection(*gated)
        return out

    def _aux_in(self, value: ast.AST | None) -> str | None:
        """How a returned value holds the aux list: "tuple", "boxed", "other", or None (not at all)."""
        if value is None or isinstance(value, ast.Name) \
                or not any(isinstance(n, ast.Name) and n.id in self.aux for n in nodes_of(value)):
            return None  # a bare name is what it stands for, not the list inside a result
        if isinstance(value, ast.Tuple) and any(self._derived(e) for e in value.elts):
            return "tuple"
        if isinstance(value, ast.Call) and not isinstance(value.func, ast.Attribute):
            places = [(i, None) for i, a in enumerate(value.args) if self._holds_aux(a)] + \
                     [(None, k.arg) for k in value.keywords if self._holds_aux(k.value)]
            if places:
                self.boxes += [(value, i, k) for i, k in places]
                return "boxed"
        return "other"

    def _gate(self, tests: list[ast.AST]) -> set[str]:
        """Self attributes read by the undecided tests a return of aux sits under."""
        out: set[str] = set()
        for test in tests:
            calls = {id(n.func) for n in nodes_of(test) if isinstance(n, ast.Call)}
            out |= {n.attr for n in nodes_of(test) if isinstance(n, ast.Attribute) and id(n) not in calls
                    and isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr not in self.attrs}
            out |= self._conjuncts(test, set()) - self.attrs
        return out

    def _conjuncts(self, test: ast.AST, seen: set[str]) -> set[str]:
        """`self.X` that must be true for the test to hold, through the locals it reads
        (`capture_aux = self.capture_aux_hidden_states and ...; if capture_aux and ...:`)."""
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        out: set[str] = set()
        for part in parts:
            if isinstance(part, ast.Attribute) and _of_self(part):
                out.add(part.attr)
            elif isinstance(part, ast.BoolOp) and isinstance(part.op, ast.And):
                out |= self._conjuncts(part, seen)
            elif isinstance(part, ast.Name) and part.id not in seen and len(self.assigned.get(part.id, [])) == 1:
                seen.add(part.id)
                out |= self._conjuncts(self.assigned[part.id][0], seen)
        return out

    def _holds_aux(self, node: ast.AST) -> bool:
        """The aux list, a list made from it, or `aux or None`."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return self._derived(node.values[0]) and all(
                isinstance(v, ast.Constant) and v.value is None for v in node.values[1:])
        return self._derived(node)

    def _derived(self, node: ast.AST) -> bool:
        """The aux list, or a list made from it (`[aux[i] for i in ...]`, `list(aux.values())`)."""
        if self._is_aux(node):
            return True
        mentions = any(isinstance(n, ast.Name) and n.id in self.aux for n in nodes_of(node))
        return mentions and isinstance(node, (ast.ListComp, ast.GeneratorExp))

    def _is_aux(self, node: ast.AST) -> bool:
        """The aux list itself, or what it gives back (`aux_hidden_states.finalize()`, `list(aux.values())`)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _COPIES \
                and len(node.args) == 1:
            return self._is_aux(node.args[0])
        return isinstance(node, ast.Name) and node.id in self.aux

    def _normal_path(self) -> NormalPath:
        return NormalPath(load_normal_truths("sglang"), nonempty=self.aux)

    def _values(self, value: ast.expr | None) -> list[tuple[ast.AST | None, tuple[ast.expr, ...]]]:
        """What a returned expression may be on the normal path (`(h, aux) if aux else h`, a
        local bound to a tuple), each with the undecided tests it sits under."""
        out: list[tuple[ast.AST | None, tuple[ast.expr, ...]]] = []
        for v, tests in self._normal_path().values(value):
            if isinstance(v, ast.Name) and v.id not in self.aux and self.assigned.get(v.id) \
                    and all(isinstance(a, ast.Tuple) for a in self.assigned[v.id]):
                out += [(a, tests) for a in self.assigned[v.id]]
            else:
                out.append((v, tests))
        return out

    def _passed(self, value: ast.AST | None) -> list[tuple[str, str]]:
        """The forward or helper whose result `value` is, returned as it came."""
        calls = [value] if isinstance(value, ast.Call) else \
            self.assigned.get(value.id, []) if isinstance(value, ast.Name) else []
        out = []
        for call in calls:
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                if _is_super_call(call, call.func.attr):
                    out.append(("super", call.func.attr))
                elif isinstance(call.func.value, ast.Name) and call.func.value.id == "self" \
                        and call.func.attr != "forward":
                    out.append(("self", call.func.attr))
        return out


@dataclass(frozen=True)
class _Unpack:
    line: int
    source: str  # the name unpacked (`hidden_states`)
    aux: str  # the name the aux states land in
    rebinds: bool  # the unpack binds its source again (`hidden_states, aux = hidden_states`)
    tests: tuple[ast.AST, ...]  # the `if` tests it sits under


class _ServedForward:
    """A served forward's unpacks of the decoder's tuple and what it hands its logits processor."""

    def __init__(self, fn: Fn):
        self.fn = fn
        self.nodes = nodes_of(fn)
        self.unpacks: list[_Unpack] = []
        self._calls: list[tuple[ast.Call, tuple[ast.AST, ...]]] | None = None  # logits_calls, read once
        self._visit(fn.body, ())

    def _visit(self, stmts: list[ast.stmt], tests: tuple[ast.AST, ...]) -> None:
        for s in stmts:
            if isinstance(s, ast.If):
                self._visit(s.body, (*tests, s.test))
                self._visit(s.orelse, (*tests, ast.UnaryOp(op=ast.Not(), operand=s.test)))
            elif isinstance(s, (ast.With, ast.AsyncWith, ast.Try)):
                self._visit(s.body, tests)
            elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Tuple) \
                    and len(s.targets[0].elts) == 2 and all(isinstance(e, ast.Name) for e in s.targets[0].elts) \
                    and isinstance(s.value, ast.Name):
                first, aux = s.targets[0].elts
                assert isinstance(first, ast.Name) and isinstance(aux, ast.Name)
                self.unpacks.append(_Unpack(s.lineno, s.value.id, aux.id, first.id == s.value.id, tests))

    def field_reads(self, fields: frozenset[str]) -> list[tuple[ast.Attribute, tuple[ast.AST, ...], str | None]]:
        """Each read of `x.<field>`, the tests it sits under (statements' and expressions'), and
        the local it is bound to (`aux = output.aux if flag else None`), if any."""
        out: list[tuple[ast.Attribute, tuple[ast.AST, ...], str | None]] = []

        def visit(stmts: list[ast.stmt], tests: tuple[ast.AST, ...]) -> None:
            for s in stmts:
                if isinstance(s, ast.If):
                    visit(s.body, (*tests, s.test))
                    visit(s.orelse, (*tests, ast.UnaryOp(op=ast.Not(), operand=s.test)))
                    continue
                if isinstance(s, (ast.With, ast.AsyncWith, ast.Try)):
                    visit(s.body, tests)
                    continue
                target = s.targets[0].id if isinstance(s, ast.Assign) and len(s.targets) == 1 \
                    and isinstance(s.targets[0], ast.Name) else None
                for n in nodes_of(s):
                    if isinstance(n, ast.Attribute) and n.attr in fields and isinstance(n.value, ast.Name) \
                            and isinstance(n.ctx, ast.Load):
                        out.append((n, (*tests, *_expression_tests(s, n)), target))

        visit(self.fn.body, ())
        return out

    def in_logits(self, node: ast.AST) -> bool:
        return any(node is m for c in self.nodes if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                   and c.func.attr == LOGITS for m in nodes_of(c))

    def unpacked_twice(self, running: list[_Unpack]) -> _Unpack | None:
        """A second unpack of a name the first unpack bound again, with no assignment between."""
        for a, b in zip(running, running[1:], strict=False):
            if a.rebinds and (b.source, b.aux) == (a.source, a.aux) \
                    and [ast.dump(t) for t in a.tests] == [ast.dump(t) for t in b.tests] and all(
                    _keeps_tensor(n, a.source) for n in self.nodes
                    if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and a.line < n.lineno < b.line
                    and any(isinstance(t, ast.Name) and t.id == a.source for t in _targets(n))):
                return b
        return None

    def logits_calls(self) -> list[tuple[ast.Call, tuple[ast.AST, ...]]]:
        """Each call of the logits processor, with the tests it runs under: those of the `if`s
        and conditional expressions around it, and `not t` after an `if t:` whose body leaves."""
        if self._calls is not None:
            return self._calls
        out: list[tuple[ast.Call, tuple[ast.AST, ...]]] = []
        self._calls = out

        def visit(stmts: list[ast.stmt], tests: tuple[ast.AST, ...]) -> bool:
            for s in stmts:
                if isinstance(s, ast.If):
                    negated = ast.UnaryOp(op=ast.Not(), operand=s.test)
                    body, orelse = visit(s.body, (*tests, s.test)), visit(s.orelse, (*tests, negated))
                    if not (body or orelse):
                        return False
                    tests = tests if body and orelse else (*tests, negated if orelse else s.test)
                    continue
                if isinstance(s, (ast.With, ast.AsyncWith)):
                    if not visit(s.body, tests):
                        return False
                    continue
                for n in nodes_of(s):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == LOGITS:
                        out.append((n, (*tests, *_expression_tests(s, n))))
                if isinstance(s, (ast.Return, ast.Raise)):
                    return False
            return True

        visit(self.fn.body, ())
        return out

    def gives_itself(self, call: ast.Call, aux: str) -> bool:
        """The call hands the logits processor `aux` itself (or a local bound to it and to
        nothing made from it) where the aux hidden states go: not a slice of it, not items of
        it reordered, not nothing."""
        index, keyword = _AUX_ARG
        given = [call.args[index]] if len(call.args) > index else []
        given += [k.value for k in call.keywords if k.arg == keyword]
        if len(given) != 1 or not isinstance(given[0], ast.Name):
            return False
        same, made = {aux}, set()
        for n in self.nodes:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                if isinstance(n.value, ast.Name) and n.value.id in same:
                    same.add(n.targets[0].id)
                elif any(isinstance(m, ast.Name) and m.id in same for m in nodes_of(n.value)):
                    made.add(n.targets[0].id)  # `aux = aux[::-1]`: no longer the states as captured
        return given[0].id in same - made

    def reaches_logits(self, aux: str) -> bool | None:
        """Whether the logits processor's calls get `aux` (or a local made from it); None where
        aux goes into a call eaglelint does not follow first."""
        names = {aux}
        for n in self.nodes:
            if isinstance(n, ast.Assign) and any(isinstance(m, ast.Name) and m.id in names for m in nodes_of(n.value)):
                names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
        calls = [n for n in self.nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == LOGITS]
        if any(any(isinstance(m, ast.Name) and m.id in names for m in nodes_of(c)) for c in calls):
            return True
        read = [n for n in self.nodes if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load)]
        return None if read else False  # read anywhere else: it may reach the logits another way


def _unread_ids(marks: list[Write], obj: str) -> list[str]:
    """Why the layers the marking writes name are not known: nothing proves they are right."""
    out: list[str] = []
    unread = next((w for w in marks if w.offset is None and w.from_ids and not w.per_layer), None)
    if unread is not None:
        out.append(f"{unread.place} writes a list built from the engine's layer ids, in a way eaglelint cannot "
                   f"read as those ids plus a shift")
    changed = next((w for w in marks if w.partial), None)
    if changed is not None:  # an id added or taken away
        out.append(f"{changed.place} changes {obj}.{changed.name} in place, in a way eaglelint cannot read as the "
                   f"engine's layer ids plus a shift")
    return out


def _last_truth(writes: list[Write]) -> bool | None:
    """What a flag holds as a test after a run's writes of it, in order: a write on every path
    sets it; one on some paths keeps what it held only where it writes the same. None where
    not known or never written: a true value written on some paths only may not be written on
    the path the engine's call takes."""
    state: bool | None = None
    for w in writes:
        if w.certain:
            state = w.truth
        elif w.truth is not state:
            state = None
    return state


def _only_raises(stmts: list[ast.stmt]) -> bool:
    """A block every run of which ends in an exception (it returns nowhere and ends in
    `raise`): the member's call fails there, so what follows it runs on every path that
    completes the call."""
    return bool(stmts) and isinstance(stmts[-1], ast.Raise) and \
        not any(isinstance(n, ast.Return) for s in stmts for n in nodes_of(s))


def _one_shot(value: ast.AST | None) -> bool:
    """An iterator, used up by the first test that walks it (`(v + 1 for v in ids)`, `map(...)`):
    a decoder that asks `i in` it for each layer does not see the ids a list would hold."""
    return isinstance(value, ast.GeneratorExp) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
        and value.func.id in ("map", "filter", "iter", "zip", "reversed", "enumerate")


def _counted_from(loop: ast.For | ast.AsyncFor) -> tuple[str, int] | None:
    """The index a loop counts (`for i, layer in enumerate(self.layers, 1)`: ("i", 1)), ("", 0)
    where it counts none from elsewhere than 0, None where its start is not a number."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"
            and isinstance(loop.target, ast.Tuple) and loop.target.elts and isinstance(loop.target.elts[0], ast.Name)):
        return "", 0
    start = it.args[1] if len(it.args) > 1 else next((k.value for k in it.keywords if k.arg == "start"), None)
    if start is None:
        return "", 0
    if isinstance(start, ast.Constant) and type(start.value) is int:
        return loop.target.elts[0].id, start.value
    return None


def _expression_tests(stmt: ast.AST, node: ast.AST) -> list[ast.AST]:
    """The tests of the conditional expressions `node` sits in (`x.aux if flag else None`)."""
    out: list[ast.AST] = []
    for n in nodes_of(stmt):
        if isinstance(n, ast.IfExp):
            if any(m is node for m in nodes_of(n.body)):
                out.append(n.test)
            elif any(m is node for m in nodes_of(n.orelse)):
                out.append(ast.UnaryOp(op=ast.Not(), operand=n.test))
    return out


def _keeps_tensor(node: ast.AST, name: str) -> bool:
    """`hidden_states = self.norm(hidden_states)`: a module applied to the unpacked tensor gives a tensor."""
    value = getattr(node, "value", None)
    return isinstance(value, ast.Call) and bool(value.args) and isinstance(value.args[0], ast.Name) \
        and value.args[0].id == name and _of_self(value.func if not isinstance(value.func, ast.Attribute)
                                                  or not isinstance(value.func.value, ast.Attribute)
                                                  else value.func.value)


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return [t for target in node.targets for t in nodes_of(target)]
    return list(nodes_of(node.target)) if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
