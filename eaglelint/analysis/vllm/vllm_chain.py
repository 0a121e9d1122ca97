"""vLLM's capture chain: does the engine's `set_aux_hidden_state_layers(layers)` make the
served model return `(hidden_states, aux_hidden_states)`?

How vLLM 0.33.0 runs EAGLE-3 on the target (vllm/v1/worker/gpu_model_runner.py):
`supports_eagle3(model)` (an isinstance check against the protocol `SupportsEagle3`),
then `model.set_aux_hidden_state_layers(layers)`, with the layers from the draft config
or from `model.get_eagle3_default_aux_hidden_state_layers()` (a tuple, never None); each
step it unpacks `hidden_states, aux_hidden_states = model(...)`. The protocol's default
setter (interfaces.py) takes `self.get_language_model()` if the class has that member,
else `self.language_model` if it has that attribute, else `self`; then that object's
`.model` if it has one; asserts the result is an `EagleModelMixin` and calls its
`_set_aux_hidden_state_layers(layers)`, which writes `self.aux_hidden_state_layers`. The
decoders collect with the mixin's `_maybe_add_hidden_state(aux, idx, h, residual)` (it
appends when `layer_idx in self.aux_hidden_state_layers`) or their own `if idx in
self.aux_hidden_state_layers: aux.append(...)`, and return `hidden_states, aux` when the
list is not empty; every model between the decoder and the engine must return that
tuple as it came.

So the links are followed by what each body writes, reads and returns, whatever the
names (the protocol's default is read as any other method: only `get_language_model()`'s
default, which looks up the children assigned inside `with self._mark_language_model(...)`,
is modelled):

  b. the member the engine calls takes one argument (and the default-layers member none);
  c. what it writes: an attribute of an object reached from the served one, through
     delegation, `super()`, helpers and the protocol's default; an assertion that fails
     or a member that no held class has makes the call raise;
  d. the decoder's forward reads that attribute where it decides what to append;
  e. it returns the list on the normal path (last pipeline rank, list not empty), and
     every forward between it and the engine returns what it got.

What cannot be followed is "unknown" with the reason, never a break.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from ...packs import load_normal_truths
from ..capture.links import Broken, Chain, Link, Methods, Path_, Place, Write, self_path
from ..python.choices import held_classes
from ..python.normal_path import NormalPath
from ..python.resolve import ClassEntity, Resolver
from ..syntax.class_body import class_node
from ..syntax.sources import SourceError

SETTER = "set_aux_hidden_state_layers"
DEFAULT_LAYERS = "get_eagle3_default_aux_hidden_state_layers"
GETTER = "get_language_model"
MARKERS = ("_mark_language_model", "_mark_composite_model")  # SupportsMultiModal's: what get_language_model finds
_DEPTH = 6

Fn = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass
class Effect:
    """What one call of the setter does to the objects the served one holds."""

    writes: list[Write] = field(default_factory=list)
    fails: list[tuple[Place, str]] = field(default_factory=list)  # where the call raises, and why
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Collects:
    """How a decoder's forward collects: the self attributes its capture tests read, and
    whether it returns the list on the normal path (None: cannot tell)."""

    cls: ClassEntity
    attrs: frozenset[str]
    returns: bool | None
    place: Place | None
    test: Place | None
    why: str

    @property
    def collects(self) -> bool | None:
        return None if self.returns is None else bool(self.attrs) and self.returns


class VllmChainAnalysis:
    """The chain of each served class that lists the marker, memoised per run."""

    def __init__(self, resolver: Resolver, methods: Methods):
        self.resolver = resolver
        self.methods = methods
        self._decoders: dict[ClassEntity, Collects] = {}

    # -- what an object is -----------------------------------------------------
    def classes_at(self, served: ClassEntity, path: Path_) -> tuple[list[ClassEntity], list[str]]:
        """Classes the object at path may be, in an instance of served, and why others are unknown."""
        classes, reasons = [served], []
        for attr in path:
            out: list[ClassEntity] = []
            for parent in classes:
                held, why = held_classes(self.resolver, parent, attr)
                out += [c for c in held if c not in out]
                reasons += why
            classes = out
        return classes, reasons

    def has(self, cls: ClassEntity, name: str) -> bool:
        """`hasattr(obj, name)` for an instance of cls: a member, or an attribute its methods assign."""
        return self.resolver.find_member(cls, name) is not None or any(
            name in self.resolver.info(c).self_assigns for c in self.resolver.mro(cls))

    def marked(self, cls: ClassEntity) -> Path_ | None:
        """What SupportsMultiModal's default get_language_model() returns: the child assigned
        inside `with self._mark_language_model(...)` (or `_mark_composite_model`), or the
        descendant of the class its `targets=`/`language_targets=` names."""
        for owner in self.resolver.mro(cls):
            try:
                tree = self.resolver.project.tree(owner.path)
            except SourceError:
                continue
            node = class_node(tree, owner.qualname)
            for sub in ast.walk(node) if node is not None else ():
                if not isinstance(sub, ast.With):
                    continue
                calls = [i.context_expr for i in sub.items if isinstance(i.context_expr, ast.Call)
                         and isinstance(i.context_expr.func, ast.Attribute) and i.context_expr.func.attr in MARKERS]
                for call in calls:
                    attr = next((t.attr for inner in ast.walk(sub) for t in _targets(inner)
                                 if isinstance(t, ast.Attribute) and _is_self(t.value)), None)
                    if attr is None:
                        continue
                    target = next((ast.unparse(k.value) for k in call.keywords
                                   if k.arg in ("targets", "language_targets")), None)
                    return self._target_under(cls, (attr,), target) if target else (attr,)
        return None

    def _target_under(self, cls: ClassEntity, path: Path_, target: str) -> Path_ | None:
        """path, or the attribute one level under it, whose class is `target` (or derives from it)."""
        classes, _ = self.classes_at(cls, path)
        if any(target in {c.qualname for c in self.resolver.mro(k)} for k in classes):
            return path
        for held in classes:
            for c in self.resolver.mro(held):
                for attr in self.resolver.info(c).self_assigns:
                    inner, _ = held_classes(self.resolver, held, attr)
                    if any(target in {m.qualname for m in self.resolver.mro(k)} for k in inner):
                        return (*path, attr)
        return None

    # -- b and c: the call, and what it writes ---------------------------------
    def chain(self, served: ClassEntity) -> Chain | None:
        member = self.resolver.find_member(served, SETTER)
        if member is None:
            return None
        where = Place(member.owner, member.line, f"{member.owner.qualname}.{SETTER}")
        accepted = self._accepts(served, where)
        if accepted is not None:
            return Chain(served, SETTER, where, None, (accepted,), ())
        effect = Effect()
        self._run(served, member.owner, SETTER, (), effect, 0)
        if effect.fails:
            place, why = effect.fails[0]
            return Chain(served, SETTER, where, None, (Broken(
                Link.WRITE, f"{why}: the engine's call raises", place, None, fails=True),), ())
        default = self.resolver.find_member(served, DEFAULT_LAYERS)
        if default is not None and default.function is not None:
            asked = Effect()  # called when the draft config names no layers: only its failures matter
            self._run(served, default.owner, DEFAULT_LAYERS, (), asked, 0)
            if asked.fails:
                place, why = asked.fails[0]
                return Chain(served, SETTER, where, None, (Broken(
                    Link.CALL, f"{why}: the engine's call of {DEFAULT_LAYERS} (when the draft config names no layers) "
                               f"raises", place, None, fails=True),), ())
        broken: list[Broken] = []
        unknown = list(effect.unknown)
        decoder = None
        by_path: dict[Path_, list[Write]] = {}
        for w in effect.writes:
            by_path.setdefault(w.path, []).append(w)
        if not by_path and not unknown:
            broken.append(Broken(Link.WRITE, f"{where} writes nothing on any object {served.qualname} holds: "
                                             f"nothing is captured", where, None))
        for path, writes in by_path.items():
            classes, reasons = self.classes_at(served, path)
            if not classes:
                unknown += reasons or [f"self.{'.'.join(path)} of {served.qualname} cannot be resolved"]
                continue
            for cls in classes:
                decoder = decoder or cls
                found = self._links_de(served, path, cls, writes)
                if isinstance(found, str):
                    unknown.append(found)
                elif found is not None:
                    broken.append(found)
        return Chain(served, SETTER, where, decoder, tuple(dict.fromkeys(broken)), tuple(dict.fromkeys(unknown)))

    def _accepts(self, served: ClassEntity, where: Place) -> Broken | None:
        """The setter takes the layers (one argument); the default-layers member takes none."""
        for name, given in ((SETTER, 1), (DEFAULT_LAYERS, 0)):
            member = self.resolver.find_member(served, name)
            if member is None:
                continue
            place = Place(member.owner, member.line, f"{member.owner.qualname}.{name}")
            if member.function is None:
                return Broken(Link.CALL, f"{place} is a class attribute, not a method the engine can call",
                              place, None, fails=True)
            fn = member.function
            if "property" in fn.decorators:
                return Broken(Link.CALL, f"{place} is a property; the engine calls it", place, None, fails=True)
            params = [p for p in fn.params if p.kind in ("posonly", "pos")]
            own = params if "staticmethod" in fn.decorators else params[1:]
            if any(p.kind == "vararg" for p in fn.params):
                continue
            required = [p for p in own if p.default is None]
            if len(required) > given or len(own) < given:
                return Broken(Link.CALL, f"{place} takes {len(required)} required argument(s); the engine passes "
                                         f"{given}", place, None, fails=True)
        return None

    def _run(self, served: ClassEntity, defined: ClassEntity, name: str, path: Path_, out: Effect,
             depth: int) -> None:
        """One run of `defined.name` with self at `path` and its first argument the layers."""
        if depth > _DEPTH:
            out.unknown.append(f"{defined.qualname}.{name}: delegation too deep")
            return
        fn = self.methods.method_node(defined, name, positions=True)
        if fn is None:
            out.unknown.append(f"{defined.qualname}.{name} cannot be read")
            return
        place = Place(defined, fn.lineno, f"{defined.qualname}.{name}")
        params = [a.arg for a in fn.args.args]
        if not params:
            return
        walk = _SetterWalk(self, served, defined, path, out, depth, place, params[0], set(params[1:2]))
        walk.block(fn.body)

    # -- d and e: what the decoder reads and returns -----------------------------
    def decoder(self, cls: ClassEntity) -> Collects:
        if cls not in self._decoders:
            self._decoders[cls] = self._decoder(cls)
        return self._decoders[cls]

    def _decoder(self, cls: ClassEntity) -> Collects:
        found = self._forward(cls, 0)
        if found is None:
            return Collects(cls, frozenset(), None, None, None, f"no forward of {cls.qualname} can be read")
        defined, fn = found
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        reader = _DecoderReader(self, cls, defined, fn)
        if reader.via_super is not None:  # `return super().forward(...)`: the base's forward collects
            base = reader.via_super
            inner = self._read_from(cls, base)
            if inner is not None:
                return inner
        test = Place(reader.test_at[0], reader.test_at[1], reader.test_at[2]) if reader.test_at else None
        if reader.returns is None:
            why = f"{place} returns what eaglelint cannot follow"
        elif not reader.attrs:
            why = f"{place} collects no aux hidden states (no list it returns is appended to under a test " \
                  f"that reads an attribute)"
        elif not reader.returns:
            why = f"{place} collects aux hidden states but does not return them on the normal path"
        else:
            why = f"{place} collects aux hidden states (reads {', '.join(f'self.{a}' for a in sorted(reader.attrs))})"
        return Collects(cls, frozenset(reader.attrs), reader.returns, place, test, why)

    def _read_from(self, cls: ClassEntity, start: int) -> Collects | None:
        found = self._forward(cls, start)
        if found is None:
            return None
        defined, fn = found
        reader = _DecoderReader(self, cls, defined, fn)
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        test = Place(*reader.test_at) if reader.test_at else None
        if reader.attrs and reader.returns:
            why = f"{place} collects aux hidden states (reads {', '.join(f'self.{a}' for a in sorted(reader.attrs))})"
        else:
            why = f"{place} collects no aux hidden states it returns"
        return Collects(cls, frozenset(reader.attrs), reader.returns, place, test, why)

    def _forward(self, cls: ClassEntity, start: int) -> tuple[ClassEntity, Fn] | None:
        """The first forward in cls's MRO from index start, as the file has it."""
        for c in self.resolver.mro(cls)[start:]:
            if "forward" in self.resolver.info(c).methods:
                node = self.methods.method_node(c, "forward", positions=True)
                return (c, node) if node is not None else None
        return None

    def helper(self, cls: ClassEntity, name: str) -> tuple[ClassEntity, Fn] | None:
        member = self.resolver.find_member(cls, name)
        if member is None or member.function is None:
            return None
        node = self.methods.method_node(member.owner, name, positions=True)
        return (member.owner, node) if node is not None else None

    def _links_de(self, served: ClassEntity, path: Path_, cls: ClassEntity,
                  writes: list[Write]) -> Broken | str | None:
        capture = self.decoder(cls)
        obj = "self." + ".".join(path) if path else "self"
        names = {w.name for w in writes}
        writer = writes[0].place
        wrote = ", ".join(f"{obj}.{n}" for n in sorted(names))
        if capture.returns is None:
            return capture.why
        if not names & capture.attrs:
            if not capture.attrs:
                return Broken(
                    Link.READ, f"{writer} writes {wrote} ({cls.qualname}); {capture.why}: nothing is captured",
                    writer, capture.place)
            reader = capture.test or capture.place
            read = ", ".join(f"self.{a}" for a in sorted(capture.attrs))
            return Broken(Link.READ, f"{writer} writes {wrote} ({cls.qualname}); {reader} reads only {read}: "
                                     f"nothing is captured", writer, reader)
        if not capture.returns:
            return Broken(Link.RETURN, f"{writer} turns capture on in {obj} ({cls.qualname}), but {capture.why}: "
                                       f"the engine unpacks a tensor", writer, capture.place)
        if not path:
            return None
        dropped = self.passes_on(served, path)
        if isinstance(dropped, Place):
            return Broken(Link.RETURN, f"{dropped} does not return what {obj}'s forward returns as it came (it keeps "
                                       f"only part of it): the aux hidden states {cls.qualname} collects never reach "
                                       f"the engine", writer, dropped)
        return dropped

    # -- e, on the way up: every forward between the decoder and the engine ------
    def passes_on(self, holder: ClassEntity, path: Path_, start: int = 0, depth: int = 0) -> Place | str | None:
        """None where holder's forward returns what the object at path returns; the forward
        (a Place) where it plainly keeps only part of it; a reason where that cannot be told."""
        found = self._forward(holder, start)
        if found is None or depth > _DEPTH:
            return f"no forward of {holder.qualname} can be read"
        defined, fn = found
        place = Place(defined, fn.lineno, f"{defined.qualname}.forward")
        verdicts = _ForwardReturns(fn, path).verdicts
        if not verdicts:
            return f"{place} returns nothing eaglelint can follow"
        undecided = None
        for kind, rest in verdicts:
            if kind == "drops":
                return place
            if kind == "super":
                mro = self.resolver.mro(holder)
                inner = self.passes_on(holder, path, mro.index(defined) + 1, depth + 1)
            elif kind == "call" and rest:
                classes, reasons = self.classes_at(holder, path[:len(path) - len(rest)])
                if not classes:
                    inner = f"{place}: {'; '.join(reasons) or 'the object it calls cannot be resolved'}"
                else:
                    results = [self.passes_on(c, rest, 0, depth + 1) for c in classes]
                    inner = next((r for r in results if isinstance(r, Place)), None) or next(
                        (r for r in results if r is not None), None)
            elif kind == "call":
                inner = None
            else:
                inner = f"{place} returns something other than what self.{'.'.join(path)} returns"
            if isinstance(inner, Place):
                return inner
            undecided = undecided or inner
        return undecided


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _is_super(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target]
    return []


def _const(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _SetterWalk:
    """One run of a setter body: the objects locals stand for, what reaches them, what raises."""

    def __init__(self, chain: VllmChainAnalysis, served: ClassEntity, defined: ClassEntity, path: Path_,
                 out: Effect, depth: int, place: Place, self_name: str, layers: set[str]):
        self.chain, self.served, self.defined, self.out, self.depth, self.place = \
            chain, served, defined, out, depth, place
        self.env: dict[str, Path_] = {self_name: path}
        self.layers = layers  # locals holding the engine's layers, or what is made of them
        self.undecided = 0  # enclosing conditions the walk cannot decide

    def at(self, line: int) -> Place:
        return Place(self.defined, line, self.place.what)

    def classes(self, path: Path_) -> list[ClassEntity]:
        return self.chain.classes_at(self.served, path)[0]

    def block(self, stmts: list[ast.stmt]) -> bool:
        """False once a statement always leaves."""
        for s in stmts:
            if isinstance(s, (ast.Return, ast.Raise)):
                if isinstance(s, ast.Return) and s.value is not None:
                    self.expr(s.value)
                return False
            if isinstance(s, ast.If):
                if not self.branch(s):
                    return False
            elif isinstance(s, ast.Assert):
                if self.truth(s.test) is False and not self.undecided:
                    self.out.fails.append((self.at(s.lineno), f"{self.at(s.lineno)} asserts "
                                                              f"{ast.unparse(s.test)}{self.about(s.test)}"))
                    return False
            elif isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
                self.expr(s.value)
                for t in _targets(s):
                    self.assign(t, s.value, s.lineno)
            elif isinstance(s, ast.Expr):
                self.expr(s.value)
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                self.loop(s)
            elif isinstance(s, (ast.With, ast.Try)) and not self.block(s.body):
                return False
        return True

    def branch(self, s: ast.If) -> bool:
        """The branch the condition decides; both where it cannot be decided (what either
        writes counts, no failure in them is sure)."""
        truth = self.truth(s.test)
        if truth is not None:
            return self.block(s.body if truth else s.orelse)
        self.undecided += 1
        a, b = self.block(s.body), self.block(s.orelse)
        self.undecided -= 1
        return a or b

    def loop(self, s: ast.For | ast.AsyncFor | ast.While) -> None:
        """A loop may run no time: what it writes counts, no failure in it is sure."""
        if not isinstance(s, ast.While) and self.mentions_layers(s.iter):
            self.layers |= {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
        self.undecided += 1
        self.block(s.body)
        self.block(s.orelse)
        self.undecided -= 1

    def about(self, test: ast.AST) -> str:
        """What the object an assertion tests is: `, and self.language_model.model is X (f.py:3)`."""
        call = test.operand if isinstance(test, ast.UnaryOp) else test
        obj = self.value(call.args[0]) if isinstance(call, ast.Call) and call.args else None
        classes = self.classes(obj) if obj is not None else []
        if obj is None or not classes:
            return ", which is false here"
        where = ", ".join(f"{c.qualname} ({Path(c.path).name}:{self.chain.resolver.info(c).line})" for c in classes)
        return f", and {'.'.join(('self', *obj))} is {where}"

    def value(self, node: ast.AST) -> Path_ | None:
        """The object an expression stands for: `self.x`, `self.get_language_model()`,
        `getattr(obj, "model", obj)`."""
        path = self_path(node, self.env)
        if path is not None:
            return path
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr" \
                and len(node.args) == 3 and _const(node.args[1]):
            obj = self.value(node.args[0])
            if obj is None or self.value(node.args[2]) != obj:
                return None
            has = {self.chain.has(c, _const(node.args[1]) or "") for c in self.classes(obj)}
            if has == {True}:
                return (*obj, _const(node.args[1]) or "")
            return obj if has == {False} else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args:
            obj = self_path(node.func.value, self.env)
            if obj is not None:
                return self.returned(obj, node.func.attr)
        return None

    def returned(self, obj: Path_, name: str) -> Path_ | None:
        """What `obj.name()` returns, as an object path: its body's `return self.x`, or, for
        SupportsMultiModal's default get_language_model(), the child it marks."""
        paths = set()
        for cls in self.classes(obj):
            found = self.chain.helper(cls, name)
            if found is None:
                return None
            owner, fn = found
            returns = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
            inner = {self_path(r, {fn.args.args[0].arg: obj}) if fn.args.args else None for r in returns}
            if len(inner) == 1 and None not in inner:
                paths |= inner
                continue
            if name == GETTER and any(isinstance(n, ast.Attribute) and n.attr == "_language_model_names"
                                      for n in ast.walk(fn)):
                marked = self.chain.marked(cls)
                if marked is None:
                    return None
                paths.add((*obj, *marked))
                continue
            return None
        return paths.pop() if len(paths) == 1 else None

    def truth(self, test: ast.AST) -> bool | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) == 2:
            obj = self.value(test.args[0])
            classes, reasons = self.chain.classes_at(self.served, obj) if obj is not None else ([], [])
            if not classes or reasons:  # some of what it may hold cannot be named: either answer
                return None
            if test.func.id == "hasattr" and _const(test.args[1]):
                has = {self.chain.has(c, _const(test.args[1]) or "") for c in classes}
                return has.pop() if len(has) == 1 else None
            if test.func.id == "isinstance":
                names = {ast.unparse(e).rsplit(".", 1)[-1] for e in
                         (test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]])}
                are = {bool(names & {m.qualname for m in self.chain.resolver.mro(c)}) for c in classes}
                return are.pop() if len(are) == 1 else None
        return None

    def assign(self, target: ast.AST, value: ast.AST, line: int) -> None:
        if isinstance(target, ast.Name):
            path = self.value(value)
            if path is not None:
                self.env[target.id] = path
            else:
                self.env.pop(target.id, None)
            if self.mentions_layers(value):
                self.layers.add(target.id)
            return
        if isinstance(target, ast.Attribute) and self.mentions_layers(value):
            obj = self_path(target.value, self.env)
            if obj is not None:
                self.out.writes.append(Write(obj, target.attr, False, self.at(line)))
        elif isinstance(target, ast.Subscript) and (self.mentions_layers(value) or self.mentions_layers(target)):
            # `self.model._can_record_outputs[key] = ...` (the Transformers backend): what reads a
            # container entry is not followed
            self.out.unknown.append(f"{self.at(line)} stores the layers into {ast.unparse(target)}, which "
                                    f"eaglelint does not follow")

    def mentions_layers(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in self.layers for n in ast.walk(node))

    def expr(self, node: ast.AST) -> None:
        for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
            if any(self.mentions_layers(a) for a in [*call.args, *(k.value for k in call.keywords)]):
                self.call(call)

    def call(self, call: ast.Call) -> None:
        """A call handed the layers: followed into the method it runs, on the object it runs on."""
        func = call.func
        where = self.at(call.lineno)
        if not isinstance(func, ast.Attribute):
            if not any(self.value(a) is not None for a in [*call.args, *(k.value for k in call.keywords)]):
                return  # `tuple(sorted(set(layers)))`: a value made of the layers, no object it could write
            self.out.unknown.append(f"{where} hands the layers to {ast.unparse(func)}, which eaglelint does "
                                    f"not follow")
            return
        if isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
            mro = self.chain.resolver.mro(self.classes(self.env_self())[0]) if self.classes(self.env_self()) else []
            start = mro.index(self.defined) + 1 if self.defined in mro else len(mro)
            owner = next((c for c in mro[start:] if func.attr in self.chain.resolver.info(c).methods), None)
            if owner is None:
                self.out.unknown.append(f"{where}: super().{func.attr} cannot be found")
                return
            self.chain._run(self.served, owner, func.attr, self.env_self(), self.out, self.depth + 1)
            return
        obj = self.value(func.value)
        if obj is None:
            self.out.unknown.append(f"{where} hands the layers to {ast.unparse(func)}, on an object eaglelint "
                                    f"cannot follow")
            return
        classes, reasons = self.chain.classes_at(self.served, obj)
        if not classes:
            self.out.unknown.append(f"{where}: self.{'.'.join(obj)} cannot be resolved"
                                    f"{': ' + reasons[0] if reasons else ''}")
            return
        if reasons:  # it may also hold a class nobody can name yet (the checkpoint's choice)
            self.out.unknown.append(f"{where}: self.{'.'.join(obj)} may also be what eaglelint cannot "
                                    f"resolve: {reasons[0]}")
        members = [(c, self.chain.resolver.find_member(c, func.attr)) for c in classes]
        if all(m is None for _, m in members) and not self.undecided and not reasons:
            self.out.fails.append((where, f"{where} calls self.{'.'.join(obj)}.{func.attr}, which "
                                          f"{', '.join(c.qualname for c in classes)} does not have"))
            return
        for _, member in members:
            if member is not None and member.function is not None:
                self.chain._run(self.served, member.owner, func.attr, obj, self.out, self.depth + 1)

    def env_self(self) -> Path_:
        return next(iter(self.env.values()))


class _DecoderReader:
    """One decoder forward: the lists it collects (made fresh, appended to under a test that
    looks the layer up in a self attribute, also through a self helper it hands the list
    to), and whether it returns one on the normal path."""

    def __init__(self, chain: VllmChainAnalysis, cls: ClassEntity, defined: ClassEntity, fn: Fn, depth: int = 0):
        self.chain, self.cls, self.defined, self.fn = chain, cls, defined, fn
        self.attrs: set[str] = set()
        self.test_at: tuple[ClassEntity, int, str] | None = None
        self.via_super: int | None = None
        self.aux: set[str] = set()
        self.assigned: dict[str, list[ast.AST]] = {}
        for n in ast.walk(fn):
            for t in _targets(n):
                if isinstance(t, ast.Name) and getattr(n, "value", None) is not None:
                    self.assigned.setdefault(t.id, []).append(n.value)  # type: ignore[attr-defined]
        self.aux_positions: set[int] = set()  # where its returned tuples hold the collected list
        self._collect(fn, [])
        self._unpacked(depth)
        self._comprehended()
        self._carried()
        self.returns = self._returns()

    def _fresh(self, value: ast.AST) -> bool:
        return (isinstance(value, ast.List) and not value.elts) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list"
            and not value.args)

    def _collect(self, node: ast.AST, tests: list[ast.expr]) -> None:
        """Walks the body with the tests that guard each statement."""
        if isinstance(node, ast.If):
            for s in node.body + node.orelse:
                self._collect(s, [*tests, node.test])
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not self.fn:
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
            if node.func.attr in ("append", "extend") and isinstance(target, ast.Name) and self._is_fresh(target.id):
                self._read_tests(tests, self.defined, self.fn.name)
                if self.attrs:
                    self.aux.add(target.id)
            elif _is_self(target):
                self._through_helper(node)
        for child in ast.iter_child_nodes(node):
            self._collect(child, tests)

    def _is_fresh(self, name: str) -> bool:
        return any(self._fresh(v) or self._helper_returns_fresh(v) for v in self.assigned.get(name, []))

    def _helper_returns_fresh(self, value: ast.AST) -> bool:
        """`aux = self._maybe_add_hidden_state([], ...)`: a fresh list handed to a helper that returns it."""
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and _is_self(value.func.value) \
            and any(self._fresh(a) for a in value.args)

    def _through_helper(self, call: ast.Call) -> None:
        """`self._maybe_add_hidden_state(aux, idx, ...)`: the helper appends its list parameter
        under a test; that test is this forward's."""
        assert isinstance(call.func, ast.Attribute)
        handed = [(i, a) for i, a in enumerate(call.args)
                  if (isinstance(a, ast.Name) and self._is_fresh(a.id)) or self._fresh(a)]
        if not handed:
            return
        found = self.chain.helper(self.cls, call.func.attr)
        if found is None:
            return
        for index, arg in handed:
            before = len(self.attrs)
            self._helper(found[0], found[1], index, 0)
            if len(self.attrs) > before:
                if isinstance(arg, ast.Name):
                    self.aux.add(arg.id)
                for name, values in self.assigned.items():  # aux = self.helper([], ...)
                    if any(v is call for v in values):
                        self.aux.add(name)

    def _helper(self, owner: ClassEntity, fn: Fn, index: int, depth: int) -> None:
        """The tests under which helper `fn` appends its index-th argument (after self),
        also where it hands that argument on to `super().<m>(...)` or `self.<m>(...)`."""
        params = [a.arg for a in fn.args.args][1:]
        if index < len(params) and depth <= _DEPTH:
            self._helper_tests(fn, owner, params[index], [], depth, fn.name)

    def _helper_tests(self, node: ast.AST, owner: ClassEntity, param: str, tests: list[ast.expr],
                      depth: int, what: str) -> None:
        if isinstance(node, ast.If):
            for s in node.body + node.orelse:
                self._helper_tests(s, owner, param, [*tests, node.test], depth, what)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            func = node.func
            if func.attr in ("append", "extend") and isinstance(func.value, ast.Name) and func.value.id == param:
                self._read_tests(tests, owner, what)
            handed = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == param]
            if handed and (_is_self(func.value) or _is_super(func.value)):
                mro = self.chain.resolver.mro(self.cls)
                start = mro.index(owner) + 1 if _is_super(func.value) and owner in mro else 0
                callee = next((c for c in mro[start:] if func.attr in self.chain.resolver.info(c).methods), None)
                inner = self.chain.methods.method_node(callee, func.attr, positions=True) if callee else None
                if callee is not None and inner is not None:
                    self._helper(callee, inner, handed[0], depth + 1)
        for child in ast.iter_child_nodes(node):
            self._helper_tests(child, owner, param, tests, depth, what)

    def _read_tests(self, tests: list[ast.expr], owner: ClassEntity, what: str) -> None:
        """The innermost test that looks something up in a self attribute decides."""
        for test in reversed(tests):
            found = {c.attr for n in ast.walk(test) if isinstance(n, ast.Compare)
                     and all(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops) for c in n.comparators
                     if isinstance(c, ast.Attribute) and _is_self(c.value)}
            if found:
                self.attrs |= found
                if self.test_at is None:
                    self.test_at = (owner, test.lineno, f"{owner.qualname}.{what}")
                return

    def _unpacked(self, depth: int) -> None:
        """`h, ..., aux, ... = self._run_layers(...)`: a helper that collects the list and
        returns it inside a tuple; the name at that position is the list."""
        if depth > 2:
            return
        for n in ast.walk(self.fn):
            if not (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Tuple)
                    and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
                    and _is_self(n.value.func.value)):
                continue
            found = self.chain.helper(self.cls, n.value.func.attr)
            if found is None:
                continue
            inner = _DecoderReader(self.chain, self.cls, found[0], found[1], depth + 1)
            for i in inner.aux_positions:
                target = n.targets[0].elts[i] if i < len(n.targets[0].elts) else None
                if isinstance(target, ast.Name):
                    self.aux.add(target.id)
                    self.attrs |= inner.attrs
                    if self.test_at is None and inner.test_at is not None:
                        self.test_at = inner.test_at

    def _comprehended(self) -> None:
        """`aux = [by_layer[i] for i in self.aux_hidden_state_layers if i in by_layer]`: a list
        made by looking the layers up in a self attribute."""
        for name, values in self.assigned.items():
            for value in values:
                parts = [value.left, value.right] if isinstance(value, ast.BinOp) else [value]
                for comp in (p for p in parts if isinstance(p, ast.ListComp)):
                    found = {g.iter.attr for g in comp.generators
                             if isinstance(g.iter, ast.Attribute) and _is_self(g.iter.value)}
                    found |= {c.attr for g in comp.generators for t in g.ifs for n in ast.walk(t)
                              if isinstance(n, ast.Compare) for c in n.comparators
                              if isinstance(c, ast.Attribute) and _is_self(c.value)}
                    if found:
                        self.attrs |= found
                        self.aux.add(name)
                        if self.test_at is None:
                            self.test_at = (self.defined, comp.lineno, f"{self.defined.qualname}.forward")

    def _carried(self) -> None:
        """`aux = remote_aux + aux`: a name made from a collected list carries it."""
        changed = True
        while changed:
            changed = False
            for name, values in self.assigned.items():
                if name in self.aux:
                    continue
                if any(isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add) and any(
                        isinstance(s, ast.Name) and s.id in self.aux for s in (v.left, v.right)) for v in values):
                    self.aux.add(name)
                    changed = True

    def _returns(self) -> bool | None:
        normal = NormalPath(load_normal_truths("vllm"), nonempty=self.aux)
        out = False
        for value, _ in (v for r in normal.returns(self.fn.body) for v in normal.values(r.ret.value)):
            if isinstance(value, ast.Tuple) and any(isinstance(e, ast.Name) and e.id in self.aux for e in value.elts):
                out = True
                self.aux_positions |= {i for i, e in enumerate(value.elts) if isinstance(e, ast.Name)
                                       and e.id in self.aux}
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr == "forward" and _is_super(value.func.value):
                mro = self.chain.resolver.mro(self.cls)
                self.via_super = mro.index(self.defined) + 1 if self.defined in mro else None
        return out


class _ForwardReturns:
    """What a forward's normal-path returns are, relative to the object at `path` it holds:
    ("call", rest) where it returns what `self.<prefix>(...)` returns (rest: the path left
    below that object), as it came or unpacked and packed again with its aux part;
    ("super", ()) where it returns its base's forward; ("drops", ()) where it keeps only
    the first part of it (`h, _ = self.model(...)`, `self.model(...)[0]`); ("other", ())
    for anything else."""

    def __init__(self, fn: Fn, path: Path_):
        self.path = path
        self.carriers: dict[str, tuple[str, Path_]] = {}  # `out = self.model(...)`: names holding it whole
        self.first: dict[str, tuple[str, Path_]] = {}  # `h, aux = out`, `out[0]`: its first part
        self.rest: dict[str, tuple[str, Path_]] = {}  # `h, aux = out`: the parts after the first
        other: set[str] = set()
        for n in ast.walk(fn):
            if not isinstance(n, (ast.Assign, ast.AnnAssign)) or n.value is None:
                continue
            made = self._made(n.value)
            for t in _targets(n):
                if isinstance(t, ast.Name):
                    if made is not None:
                        self.carriers[t.id] = made
                    elif isinstance(n.value, ast.Subscript) and self._made(n.value.value) is not None:
                        self.first[t.id] = self._made(n.value.value)  # type: ignore[assignment]
                    else:
                        other.add(t.id)
                elif isinstance(t, ast.Tuple) and made is not None and t.elts:
                    names = [e.id for e in t.elts if isinstance(e, ast.Name)]
                    if names and isinstance(t.elts[0], ast.Name):
                        self.first[t.elts[0].id] = made
                    self.rest.update({name: made for name in names[1:]})
        for name in other:  # a name also assigned something else: not followed
            self.carriers.pop(name, None)
            self.first.pop(name, None)
        normal = NormalPath(load_normal_truths("vllm"), nonempty=self.rest, pairs=self.carriers)
        self.verdicts: list[tuple[str, Path_]] = [self._of(v) for r in normal.returns(fn.body)
                                                    for v in _branches(r.ret.value)]

    def _made(self, node: ast.AST) -> tuple[str, Path_] | None:
        if isinstance(node, ast.Name) and node.id in self.carriers:
            return self.carriers[node.id]
        return self._call(node)

    def _call(self, node: ast.AST) -> tuple[str, Path_] | None:
        """`self.a.b(...)` / `self.a.b.forward(...)` on a prefix of path; `super().forward(...)`."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "forward":
            if _is_super(func.value):
                return ("super", ())
            func = func.value
        names: list[str] = []
        while isinstance(func, ast.Attribute):
            names.append(func.attr)
            func = func.value
        if not _is_self(func) or not names:
            return None
        called = tuple(reversed(names))
        if self.path[:len(called)] == called:
            return ("call", self.path[len(called):])
        return None

    def _of(self, value: ast.AST | None) -> tuple[str, Path_]:
        made = self._made(value) if value is not None else None
        if made is not None:
            return made
        if isinstance(value, ast.Tuple):
            kept = [self.rest[e.id] for e in value.elts if isinstance(e, ast.Name) and e.id in self.rest]
            if kept:
                return kept[0]
        if isinstance(value, ast.Name) and value.id in self.first:
            return ("drops", ())
        if isinstance(value, ast.Subscript) and self._made(value.value) is not None:
            return ("drops", ())
        return ("other", ())


def _branches(value: ast.AST | None) -> list[ast.AST | None]:
    if isinstance(value, ast.IfExp):
        return _branches(value.body) + _branches(value.orelse)
    return [value]


def short(place: Place) -> str:
    return f"{place.what} ({Path(place.cls.path).name}:{place.line})"
