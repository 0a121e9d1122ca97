"""The capture chain: does the engine's capture call make the served model's logits
processor get aux hidden states?

Why by data flow: "the served class has set_eagle3_layers_to_capture" is not the
question. SGLang has shipped models whose every member exists while nothing is
captured (Qwen3.5-VL, 0.5.11 to 0.5.21: an inherited setter writes
`self.model.layers_to_capture`, the decoder decides capture by a per-layer flag), and
decoders that collect through per-layer flags although they never read a list named
`layers_to_capture`. So the chain is followed by what is written and read, whatever
the names:

  b. the member accepts the engine's call (one positional argument, possibly None);
  c. what it writes, through delegation, `super()` and helpers: attributes of an
     object reached from the served one (`("model",)` is `self.model`), or flags on
     that object's layers (`self.model.layers[i]._is_layer_to_capture`);
  d. what the decoder's forward reads to decide capture (the tests that guard what
     it appends to its aux list, or passes as a layer's capture target);
  e. whether that forward returns the list on the normal path (not idle, last
     pipeline rank, something captured), directly or through the forward it calls;
  f/g. whether the served forward unpacks the decoder's tuple under the flag the
     member sets and hands the aux states to `self.logits_processor(...)`.

Only what can be decided is decided: a link eaglelint cannot follow is "unknown" with
the reason, never a finding. This module describes; checks/chain.py reports,
checks/owner.py and `support` use `DecoderCapture.collects`, so "collects" means one
thing everywhere.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .choices import held_classes, read_off_classes
from .refs import Ref
from .resolve import ClassEntity, Resolver
from .scope import nodes_of
from .served import HEAD, LOGITS, text_models

CAPTURE_HOOK = "set_eagle3_layers_to_capture"
FLAG = "capture_aux_hidden_states"
LAYER_CONTAINER = "layers"
OUTSIDE = "outside the scanned tree"  # the resolver's reason for a class of another package
_FEEDERS = ("append", "extend", "capture", "add", "insert")
_DEPTH = 6

Fn = ast.FunctionDef | ast.AsyncFunctionDef
Path_ = tuple[str, ...]  # attributes from the served object: () is self, ("model",) is self.model


@dataclass(frozen=True)
class Place:
    cls: ClassEntity
    line: int
    what: str  # "Qwen3VLForConditionalGeneration.set_eagle3_layers_to_capture"

    def __str__(self) -> str:
        return f"{self.what} ({Path(self.cls.path).name}:{self.line})"


@dataclass(frozen=True)
class Write:
    path: Path_
    name: str  # attribute written on the object at path, or the per-layer flag
    per_layer: bool
    place: Place


@dataclass
class SetterEffect:
    """What one run of the capture member does, on the normal path (last pipeline rank)."""

    writes: list[Write] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    none_fails: Place | None = None  # where a None argument is iterated before any None test
    missing: list[tuple[Place, str, ClassEntity]] = field(default_factory=list)  # calls of members the object lacks
    refuses: bool = False  # raises on purpose for this object (a decided `if not hasattr(...): raise`)
    calls: list[Place] = field(default_factory=list)  # members followed


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

    @property
    def collects(self) -> bool | None:
        if self.returns_aux is None:
            return None
        return bool(self.attrs or self.flags) and self.returns_aux


@dataclass(frozen=True)
class Broken:
    link: str  # "b" .. "g"
    message: str
    writer: Place | None
    reader: Place | None
    fails: bool = False  # the engine's call raises (rather than capturing nothing)


@dataclass(frozen=True)
class Chain:
    served: ClassEntity
    hook: str
    member: Place
    decoder: ClassEntity | None
    broken: tuple[Broken, ...]
    unknown: tuple[str, ...]

    @property
    def holds(self) -> bool | None:
        if self.broken:
            return False
        return None if self.unknown else True


def _self_path(node: ast.AST, env: dict[str, Path_]) -> Path_ | None:
    """The object path of `self.a.b` (("a", "b")), or of a local bound to one."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id] + tuple(reversed(names))
    return None


def _layer_object(node: ast.AST, env: dict[str, Path_], layers: dict[str, Path_]) -> Path_ | None:
    """The decoder path whose layer `node` is: `self.model.layers[i]`, or a local bound to one."""
    if isinstance(node, ast.Name) and node.id in layers:
        return layers[node.id]
    if isinstance(node, ast.Subscript):
        path = _self_path(node.value, env)
        if path and path[-1] == LAYER_CONTAINER:
            return path[:-1]
    return None


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_super_call(call: ast.Call, name: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == name and isinstance(func.value, ast.Call) \
        and isinstance(func.value.func, ast.Name) and func.value.func.id == "super"


def _normal_truth(test: ast.AST, aux: set[str] = frozenset()) -> bool | None:  # type: ignore[assignment]
    """A condition's value on the path that makes logits with capture on: not idle, the
    last pipeline rank, the aux list non-empty; None where it depends on the batch."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _normal_truth(test.operand, aux)
        return None if inner is None else not inner
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "is_idle":
        return False
    if isinstance(test, ast.Attribute) and test.attr == "is_last_rank":
        return True
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 \
            and any(isinstance(n, ast.Name) and "PPProxy" in n.id for n in ast.walk(test.args[1])):
        return False
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call) \
            and isinstance(test.left.func, ast.Name) and test.left.func.id == "len" and test.left.args \
            and isinstance(test.left.args[0], ast.Name) and test.left.args[0].id in aux \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0:
        if isinstance(test.ops[0], ast.Eq):
            return False
        if isinstance(test.ops[0], (ast.NotEq, ast.Gt)):
            return True
    if isinstance(test, ast.Name) and test.id in aux:
        return True
    if isinstance(test, ast.BoolOp):
        values = [_normal_truth(v, aux) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    return None


class Methods(Protocol):
    """What reads one method's syntax tree with the file's positions (owners.OwnerAnalysis)."""

    def method_node(self, cls: ClassEntity, name: str, positions: bool = False) -> Fn | None: ...


class CaptureChainAnalysis:
    """The chain of every served class, and how every decoder collects, memoised per run."""

    def __init__(self, resolver: Resolver, owners: Methods):
        self.resolver = resolver
        self.owners = owners
        self._decoders: dict[ClassEntity, DecoderCapture] = {}
        self._is_decoder: dict[ClassEntity, bool] = {}

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
    def effect(self, served: ClassEntity, hook: str, bound: dict[Path_, ClassEntity]) -> SetterEffect | None:
        member = self.resolver.find_member(served, hook)
        if member is None or member.function is None:
            return None
        out = SetterEffect()
        self._run(served, member.owner, hook, (), bound, out, set(), True, 0)
        return out

    def _run(self, served: ClassEntity, defined: ClassEntity, name: str, path: Path_,
             bound: dict[Path_, ClassEntity], out: SetterEffect, seen: set, arg_may_be_none: bool,
             depth: int) -> None:
        key = (defined, name, path)
        if key in seen or depth > _DEPTH:
            return
        seen.add(key)
        fn = self.owners.method_node(defined, name, positions=True)
        if fn is None:
            out.unknown.append(f"{defined.qualname}.{name} cannot be read")
            return
        place = Place(defined, fn.lineno, f"{defined.qualname}.{name}")
        out.calls.append(place)
        params = [a.arg for a in fn.args.args]
        env: dict[str, Path_] = {params[0]: path} if params else {}
        arg = params[1] if len(params) > 1 else None
        state = _Walk(self, served, defined, path, bound, out, seen, depth, env,
                      {arg} if arg and arg_may_be_none else set(), place)
        state.block(fn.body)

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
        attrs, flags, returns, place, test = self._read_forward(cls, found[0], found[1], 0)
        where = str(place)
        if returns is None:
            why = f"{where} returns what a forward eaglelint cannot read returns"
        elif not (attrs or flags):
            why = f"{where} collects no aux hidden states (nothing it returns is appended to under a capture test)"
        elif not returns:
            why = f"{where} collects aux hidden states but does not return them on the normal path"
        else:
            read = [f"self.{a}" for a in sorted(attrs)] + [f"per-layer flag {f}" for f in sorted(flags)]
            why = f"{where} collects aux hidden states (reads {', '.join(read)})"
        return DecoderCapture(cls, frozenset(attrs), frozenset(flags), returns, place, why, test)

    def _forward_of(self, cls: ClassEntity, mro: list[ClassEntity]) -> tuple[ClassEntity, Fn] | None:
        for c in mro:
            if self.resolver.defines(c, "forward"):
                node = self.owners.method_node(c, "forward", positions=True)
                return (c, node) if node is not None else None
        return None

    def _read_forward(self, cls: ClassEntity, defined: ClassEntity, fn: Fn,
                      depth: int) -> tuple[set[str], set[str], bool | None, Place, Place | None]:
        """(self attributes its capture tests look layer ids up in, per-layer flags they read,
        whether it returns the aux list on the normal path, the forward, the line of the capture
        test), following super().forward and self helpers."""
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        reader = _ForwardReader(fn)
        test = Place(defined, reader.test_line, place.what) if reader.test_line else None
        attrs, flags = set(reader.attrs), set(reader.flags)
        returns: bool | None = reader.returns_aux
        for callee in reader.passes:  # returns what another forward or helper returns
            target = self._callee(cls, defined, callee)
            if target is None or depth > _DEPTH:
                continue
            node = self.owners.method_node(*target, positions=True)
            if node is None:
                continue
            a, f, r, _, inner_test = self._read_forward(cls, target[0], node, depth + 1)
            test = test or inner_test
            attrs |= a
            flags |= f
            if r:
                returns = True
            elif r is None and returns is False:
                returns = None
        for helper in reader.helpers if not (attrs or flags) else ():  # where its own test reads none
            target = self._callee(cls, defined, helper)
            node = self.owners.method_node(*target, positions=True) if target and depth <= _DEPTH else None
            if node is not None:
                inner = _ForwardReader(node)
                attrs |= inner.attrs
                flags |= inner.flags
                if test is None and inner.test_line and target:
                    test = Place(target[0], inner.test_line, f"{target[0].qualname}.{target[1]}")
        return attrs, flags, returns, place, test

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
        tests = any(isinstance(n, ast.Attribute) and n.attr == FLAG for n in ast.walk(found[1]))
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
        if member.function is None:
            return Chain(served, hook, where, None, (Broken(
                "b", f"{hook} is a class attribute of {member.owner.qualname}, not a method the engine can call",
                where, None),), ())
        problems = self._accepts(member.function, where)
        decoders = self.decoder_bindings(served)
        if not decoders:
            return Chain(served, hook, where, None, tuple(problems),
                         (f"{served.qualname} holds no decoder eaglelint can find",))
        broken: list[Broken] = list(problems)
        unknown: list[str] = []
        first: ClassEntity | None = None
        for dpath, dcls, bound in decoders:
            first = first or dcls
            effect = self.effect(served, hook, bound)
            if effect is None:
                continue
            unknown += effect.unknown
            if effect.refuses:
                continue  # the member raises for this decoder on purpose: the member rules judge that
            if effect.none_fails and not any(b.link == "b" for b in broken):
                broken.append(Broken("b", f"{effect.none_fails} iterates the layer ids without a None test; the "
                                          f"engine passes None when the draft config names no layers",
                                     effect.none_fails, None))
            for place, called, cls in effect.missing:
                broken.append(Broken("c", f"{place} calls {called}, which {cls.qualname} does not have: the "
                                          f"engine's call raises AttributeError", place, None, fails=True))
            if effect.missing:
                continue
            broken += self._links_cde(served, dpath, dcls, effect, where)
            broken += self._links_fg(served, dpath, effect, where)
        return Chain(served, hook, where, first, tuple(dict.fromkeys(broken)), tuple(dict.fromkeys(unknown)))

    def _accepts(self, fn, where: Place) -> list[Broken]:
        if "property" in fn.decorators or any(d.endswith(".setter") for d in fn.decorators):
            return [Broken("b", f"{where} is a property; the engine calls it", where, None)]
        params = [p for p in fn.params if p.kind in ("posonly", "pos")]
        static = "staticmethod" in fn.decorators
        own = params if static else params[1:]
        required = [p for p in own if p.default is None]
        if any(p.kind == "vararg" for p in fn.params):
            return []
        if not own:
            return [Broken("b", f"{where} takes no layer ids; the engine passes one argument", where, None)]
        if len(required) > 1:
            return [Broken("b", f"{where} requires {len(required)} arguments; the engine passes one", where, None)]
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
                    elif self.generates(held):
                        todo.append((where, held, {**bound, where: held}))
        return out

    def checkpoint_chosen(self, cls: ClassEntity, classes: list[ClassEntity]) -> bool:
        """classes are every registered text model: the registry picks one by the name the
        checkpoint's config gives (Llava's `ModelRegistry.resolve_model_cls(arch)`)."""
        return len(classes) > 1 and set(classes) == set(text_models(self.resolver, cls.path))

    def _alias_of(self, cls: ClassEntity, attr: str) -> str | None:
        """The other attribute of self that `attr` only ever names (a property or an assignment
        whose every value is `self.<other>`), so both reach the same object; None otherwise."""
        values = [v for c in self.resolver.mro(cls) for a in self.resolver.info(c).self_assigns.get(attr, ())
                  for v in a.values]
        others = {v.name for v in values if v.kind == "self"}
        if values and len(others) == 1 and all(v.kind == "self" for v in values) and attr not in others:
            return next(iter(others))
        return None

    def canonical(self, served: ClassEntity, path: Path_) -> Path_:
        """path with its first attribute replaced by the one it aliases on the served object."""
        if path and (other := self._alias_of(served, path[0])) is not None:
            return (other, *path[1:])
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
                   where: Place) -> list[Broken]:
        writes = [w for w in effect.writes if self.canonical(served, w.path) == dpath and w.name != FLAG]
        capture = self.decoder(dcls)
        reader = capture.place
        if capture.returns_aux is None:
            return []
        attrs = {w.name for w in writes if not w.per_layer}
        flags = {w.name for w in writes if w.per_layer}
        obj = "self." + ".".join(dpath)
        if not writes:
            if effect.unknown:
                return []
            return [Broken("c", f"{where} writes nothing on {obj} ({dcls.qualname}), which decides what is "
                                f"captured: nothing is captured", where, reader)]
        writer = writes[0].place
        wrote = ", ".join([f"{obj}.{a}" for a in sorted(attrs)] + [f"per-layer flag {f} on {obj}.layers[i]"
                                                                   for f in sorted(flags)])
        if not (attrs & capture.attrs or flags & capture.flags):
            if not (capture.attrs or capture.flags):
                return [Broken("d", f"{writer} writes {wrote}; {capture.why}: nothing is captured", writer, reader)]
            read = ", ".join([f"self.{a}" for a in sorted(capture.attrs)] +
                             [f"layer.{f}" for f in sorted(capture.flags)])
            reader = capture.test or reader
            return [Broken("d", f"{writer} writes {wrote}; {reader} reads only {read}: nothing is captured",
                           writer, reader)]
        if not capture.returns_aux:
            marker = next(w for w in writes if (w.name in capture.flags if w.per_layer else w.name in capture.attrs))
            return [Broken("e", f"{marker.place} turns capture on in {obj} ({dcls.qualname}), but {capture.why}: "
                                f"nothing reaches the logits processor", marker.place, reader)]
        return []

    def _links_fg(self, served: ClassEntity, dpath: Path_, effect: SetterEffect, where: Place) -> list[Broken]:
        """The served forward, where it runs this decoder itself (dpath is one attribute)."""
        if len(dpath) != 1 or not self.generates(served):
            return []
        found = self._logits_forward(served)
        if found is None:
            return []
        defined, fn = found
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        tested = {n.attr for n in nodes_of(fn) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                  and n.value.id == "self" and n.attr == FLAG}
        set_flags = {w.name for w in effect.writes if w.path == () and not w.per_layer}
        if tested and not set_flags & tested and not effect.unknown:
            return [Broken("f", f"{place} unpacks the decoder's tuple only when self.{FLAG} is set, and "
                                f"{where} never sets it: the logits processor gets a tuple", where, place)]
        return []

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
    """One symbolic run of a capture member's body: writes, delegations, None handling."""

    def __init__(self, chain: CaptureChainAnalysis, served: ClassEntity, defined: ClassEntity, path: Path_,
                 bound: dict[Path_, ClassEntity], out: SetterEffect, seen: set, depth: int,
                 env: dict[str, Path_], maybe_none: set[str], place: Place):
        self.chain, self.served, self.defined, self.path = chain, served, defined, path
        self.bound, self.out, self.seen, self.depth = bound, out, seen, depth
        self.env, self.maybe_none, self.place = env, maybe_none, place
        self.layers: dict[str, Path_] = {}
        self.none_attrs: set[Path_] = set()  # attributes holding the argument while it may be None
        self.undecided = 0  # enclosing conditions the walk cannot decide
        self.tested_none = False

    def block(self, stmts: list[ast.stmt]) -> bool:
        """Runs stmts; False once a statement always leaves (return, raise)."""
        return all(self.stmt(s) for s in stmts)

    def stmt(self, s: ast.stmt) -> bool:
        if isinstance(s, ast.Raise):
            self.out.refuses = self.out.refuses or self.undecided == 0
            return False
        if isinstance(s, ast.Return):
            if s.value is not None:
                self.expr(s.value)
            return False
        if isinstance(s, ast.If):
            truth = self.test(s.test)
            if truth is True:
                return self.block(s.body)
            if truth is False:
                return self.block(s.orelse)
            self.undecided += 1
            a = self.block(s.body)
            b = self.block(s.orelse)
            self.undecided -= 1
            return a or b
        if isinstance(s, (ast.For, ast.AsyncFor)):
            self.iterated(s.iter)
            if isinstance(s.target, ast.Name):
                layer = self._iter_layers(s.iter)
                if layer is not None:
                    self.layers[s.target.id] = layer
            self.block(s.body)
            self.block(s.orelse)
            return True
        return self.compound(s)

    def compound(self, s: ast.stmt) -> bool:
        if isinstance(s, (ast.With, ast.AsyncWith)):
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
                self.assign(t, value, s.lineno)
            return True
        if isinstance(s, ast.Expr):
            self.expr(s.value)
            return True
        return True

    def test(self, test: ast.AST) -> bool | None:
        names = {n.id for n in nodes_of(test) if isinstance(n, ast.Name)}
        if names & self.maybe_none:
            self.tested_none = True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.test(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
                and len(test.args) == 2 and _const(test.args[1]):
            path = _self_path(test.args[0], self.env)
            if path is not None:
                classes = self.chain.classes_at(self.served, path, self.bound)
                if classes:
                    has = {self.chain.resolver.find_member(c, _const(test.args[1]) or "") is not None
                           for c in classes}
                    return has.pop() if len(has) == 1 else None
        if isinstance(test, ast.Attribute) and test.attr == "is_last_rank":
            return True
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            return None
        return None

    def _iter_layers(self, node: ast.AST) -> Path_ | None:
        path = _self_path(node, self.env)
        if path and path[-1] == LAYER_CONTAINER:
            return path[:-1]
        return None

    def iterated(self, node: ast.AST) -> None:
        """A None argument fails here if it was not tested first."""
        if self.tested_none or self.out.none_fails is not None:
            return
        if isinstance(node, ast.Name) and node.id in self.maybe_none:
            self.out.none_fails = Place(self.defined, getattr(node, "lineno", self.place.line), self.place.what)
        path = _self_path(node, self.env)
        if path is not None and path in self.none_attrs:
            self.out.none_fails = Place(self.defined, getattr(node, "lineno", self.place.line), self.place.what)

    def assign(self, target: ast.AST, value: ast.AST | None, line: int) -> None:
        if isinstance(target, ast.Name):
            path = _self_path(value, self.env) if value is not None else None
            if path is not None:
                self.env[target.id] = path
            elif value is not None and isinstance(value, ast.Name) and value.id in self.maybe_none \
                    and not self.tested_none:
                self.maybe_none.add(target.id)
            else:
                self.maybe_none.discard(target.id)
            return
        if isinstance(target, ast.Tuple):
            for t in target.elts:
                self.assign(t, None, line)
            return
        if not isinstance(target, ast.Attribute):
            return
        layer = _layer_object(target.value, self.env, self.layers)
        place = Place(self.defined, line, self.place.what)
        if layer is not None:
            self.out.writes.append(Write(layer, target.attr, True, place))
            return
        path = _self_path(target.value, self.env)
        if path is not None:
            self.out.writes.append(Write(path, target.attr, False, place))
            if isinstance(value, ast.Name) and value.id in self.maybe_none and not self.tested_none:
                self.none_attrs.add(path + (target.attr,))

    def expr(self, node: ast.AST) -> None:
        for n in nodes_of(node):
            if isinstance(n, ast.comprehension):
                self.iterated(n.iter)
            if isinstance(n, ast.Call):
                self.call(n)

    def call(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "setattr" and len(call.args) >= 2 and _const(call.args[1]):
            name = _const(call.args[1]) or ""
            layer = _layer_object(call.args[0], self.env, self.layers)
            place = Place(self.defined, call.lineno, self.place.what)
            if layer is not None:
                self.out.writes.append(Write(layer, name, True, place))
            else:
                path = _self_path(call.args[0], self.env)
                if path is not None:
                    self.out.writes.append(Write(path, name, False, place))
            return
        if not isinstance(func, ast.Attribute):
            return
        passes_none = bool(call.args) and isinstance(call.args[0], ast.Name) \
            and call.args[0].id in self.maybe_none and not self.tested_none
        if _is_super_call(call, func.attr):
            target = self.chain._callee(self.served if not self.path else self._cls_here(), self.defined,
                                        ("super", func.attr))
            if target is not None:
                self.chain._run(self.served, target[0], func.attr, self.path, self.bound, self.out, self.seen,
                                passes_none, self.depth + 1)
            return
        path = _self_path(func.value, self.env)
        if path is None:
            return
        classes = self.chain.classes_at(self.served, path, self.bound)
        members = [self.chain.resolver.find_member(cls, func.attr) for cls in classes]
        if path and func.attr in _ENTRY_NAMES and classes and all(m is None for m in members):
            # every class the object may be lacks it (where only some do, the member rules say so)
            where = Place(self.defined, call.lineno, self.place.what)
            self.out.missing.append((where, "self." + ".".join(path) + "." + func.attr, classes[0]))
        for member in members:
            if member is None or member.function is None:
                continue
            if not path and func.attr not in _ENTRY_NAMES and not _looks_like_setter(func.attr):
                continue
            self.chain._run(self.served, member.owner, func.attr, path, self.bound, self.out, self.seen,
                            passes_none, self.depth + 1)

    def _cls_here(self) -> ClassEntity:
        classes = self.chain.classes_at(self.served, self.path, self.bound)
        return classes[0] if classes else self.defined


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
    """`list()`, `AuxHiddenStateList()`, `AuxHiddenStatePacker(n)`: a new collection, not a computation."""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name == "list" or name[:1].isupper()


def _looks_like_setter(name: str) -> bool:
    """A helper of the served class itself worth following (a pre-filter; what it writes decides)."""
    return "capture" in name or "layer" in name or name.startswith("_set")


class _ForwardReader:
    """One forward's capture tests and returns (no following of calls: the caller does that)."""

    def __init__(self, fn: ast.AST):
        self.attrs: set[str] = set()
        self.flags: set[str] = set()
        self.passes: list[tuple[str, str]] = []  # ("super" | "self", method) whose result it returns
        self.helpers: list[tuple[str, str]] = []
        self.returns_aux: bool | None = False
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
        self.aux = self._fed(fn)
        # local functions that feed the list (`def capture_output(h): aux.capture(h)`), handed to layers
        self.feeders = {n.name for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and n is not fn and any(isinstance(m, ast.Attribute) and m.attr in _FEEDERS
                                                and isinstance(m.value, ast.Name) and m.value.id in self.aux
                                                for m in ast.walk(n))}
        self.test_line = 0
        if self.aux:  # nothing made fresh and fed: no capture test to read
            for _, tests in self._feeds(fn):
                # the innermost test that reads a capture list or flag decides (one further in may
                # pick how to gather the state, one further out the rank or the batch)
                for test in reversed(tests):
                    before = len(self.attrs) + len(self.flags)
                    self._reads(test, set())
                    if len(self.attrs) + len(self.flags) > before:
                        self.test_line = self.test_line or getattr(test, "lineno", 0)
                        break
        for n in self.nodes:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                    and n.func.value.id == "self" and n.func.attr != "forward":
                self.helpers.append(("self", n.func.attr))
        self.returns_aux = self._returns(fn)

    def _fed(self, fn: ast.AST) -> set[str]:
        """Locals made empty (`[]`, `AuxHiddenStateList()`) that something appends to or hands
        to a layer as its capture target."""
        out: set[str] = set()
        empty = {name for name, values in self.assigned.items() if any(
            (isinstance(v, ast.List) and not v.elts) or (isinstance(v, ast.Call) and _constructs(v.func))
            for value in values for v in ((value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,)))}
        if not empty:
            return set()
        for n in self.nodes:
            if isinstance(n, ast.Attribute) and n.attr in _FEEDERS and isinstance(n.value, ast.Name):
                out.add(n.value.id)
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                out.add(n.target.id)
            elif isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in ("len", "isinstance")):
                for a in [*n.args, *(k.value for k in n.keywords)]:
                    for v in (a.body, a.orelse) if isinstance(a, ast.IfExp) else (a,):
                        if isinstance(v, ast.Name):
                            out.add(v.id)
                            self.arguments.add(id(v))
        return out & empty

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

    def _feeds_here(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute) and node.attr in _FEEDERS and isinstance(node.value, ast.Name):
            return node.value.id in self.aux
        return isinstance(node, ast.Name) and (node.id in self.aux or node.id in self.feeders) \
            and isinstance(node.ctx, ast.Load) and id(node) in self.arguments

    def _reads(self, test: ast.AST, seen: set[str]) -> None:
        for n in ast.walk(test):
            if isinstance(n, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops):
                for c in n.comparators:  # `i in self.layers_to_capture`, or in a local bound to it
                    for v in self.assigned.get(c.id, []) if isinstance(c, ast.Name) else [c]:
                        self.attrs |= {a.attr for a in ast.walk(v) if isinstance(a, ast.Attribute)
                                       and isinstance(a.value, ast.Name) and a.value.id == "self"}
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "getattr" \
                    and len(n.args) >= 2 and _const(n.args[1]):
                target = n.args[0]
                if isinstance(target, ast.Name) and target.id == "self":
                    self.attrs.add(_const(n.args[1]) or "")
                else:
                    self.flags.add(_const(n.args[1]) or "")
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

    def _returns(self, fn: ast.AST) -> bool:
        found: list[ast.Return] = []
        self._reachable(getattr(fn, "body", []), found)
        out = False
        for ret in found:
            for value in self._values(ret.value):
                if isinstance(value, ast.Tuple) and any(self._is_aux(e) for e in value.elts):
                    out = True
                self.passes += self._passed(value)
        return out

    def _is_aux(self, node: ast.AST) -> bool:
        """The aux list itself, or what it gives back (`aux_hidden_states.finalize()`)."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        return isinstance(node, ast.Name) and node.id in self.aux

    def _values(self, value: ast.AST | None) -> list[ast.AST | None]:
        """What a returned expression may be on the normal path (`(h, aux) if aux else h`)."""
        if isinstance(value, ast.IfExp):
            truth = _normal_truth(value.test, self.aux)
            body, orelse = self._values(value.body), self._values(value.orelse)
            return body if truth is True else orelse if truth is False else body + orelse
        return [value]

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

    def _reachable(self, stmts: list[ast.stmt], found: list[ast.Return]) -> bool:
        for s in stmts:
            if isinstance(s, ast.Return):
                found.append(s)
                return False
            if isinstance(s, ast.Raise):
                return False
            if isinstance(s, ast.If):
                truth = _normal_truth(s.test, self.aux)
                if truth is True:
                    if not self._reachable(s.body, found):
                        return False
                elif truth is False:
                    if not self._reachable(s.orelse, found):
                        return False
                else:
                    a = self._reachable(s.body, found)
                    b = self._reachable(s.orelse, found)
                    if not (a or b):
                        return False
            elif isinstance(s, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
                if not self._reachable(s.body, found) and isinstance(s, (ast.With, ast.AsyncWith)):
                    return False
            elif isinstance(s, ast.Try) and not self._reachable(s.body + s.orelse, found):
                return False
        return True
