"""The normal path of a forward: which tests hold when it makes logits with capture on,
and which of its returns are reached there.

Why one evaluator: a decoder returns its aux list only on some paths (not an idle
batch, the last pipeline rank, something captured), and every capture chain has to
tell which `return` the engine gets. Two copies of that reading drift apart (one learns
`or`, the other `len(out) == 2`), so both chains ask this module.

Why three-valued, as mypy's `infer_condition_value`: a test the reading does not know
depends on the batch, and is None (unknown), never guessed; a return under such a test
is reached, with the test noted, so a caller can say which of its own attributes gate
it. What an engine guarantees on that path (a batch that is not idle, the last pipeline
rank) is data, `rules/normal_path.toml`, one table per engine; what a forward's own
locals hold (a non-empty aux list, a pair returned by the model it calls) is given by
the caller.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from ...packs import EngineTruth

# len(x) compared with an int constant: whether it holds for every length in [low, high]
_COMPARE: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}
_UNBOUNDED = 1 << 62  # a length with no upper bound: larger than any constant compared with


def combined(test: ast.AST, leaf: Callable[[ast.AST], bool | None]) -> bool | None:
    """`not`, `and` and `or` over three values (None: unknown, as Kleene's logic), the tests
    they combine read by `leaf`: one reading of the connectives for every caller."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = combined(test.operand, leaf)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [combined(v, leaf) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # the value that decides the whole: True for `or`
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    return leaf(test)


@dataclass(frozen=True)
class Reached:
    """A return reached on the normal path, and the undecided tests it sits under."""

    ret: ast.Return
    tests: tuple[ast.expr, ...]


class NormalPath:
    """What holds on the normal path of one forward.

    `truths`: the engine's table (packs.load_normal_truths); `nonempty`: locals that are
    a non-empty collection there (the aux list: `if aux:` and `len(aux) > 0` hold);
    `pairs`: locals that hold a 2-tuple there (what the decoder returns: `isinstance(out,
    tuple)` and `len(out) == 2` hold, `isinstance(out, Other)` does not).
    """

    def __init__(self, truths: Sequence[EngineTruth], nonempty: Collection[str] = (),
                 pairs: Collection[str] = ()):
        self.truths = tuple(truths)
        self.nonempty = frozenset(nonempty)
        self.pairs = frozenset(pairs)

    def truth(self, test: ast.AST) -> bool | None:
        """The value of `test` on the normal path: True, False, or None (it depends on the batch)."""
        return combined(test, self._leaf)

    def _leaf(self, test: ast.AST) -> bool | None:
        if isinstance(test, ast.Name) and test.id in self.nonempty:
            return True
        if isinstance(test, ast.Compare):
            return self._length(test)
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2:
            return self._isinstance(test.args[0], test.args[1])
        return self._engine(test)

    def _engine(self, test: ast.AST) -> bool | None:
        for t in self.truths:
            if t.kind == "attr" and isinstance(test, ast.Attribute) and test.attr == t.name:
                return t.value
            if t.kind == "call_attr" and isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) \
                    and test.func.attr == t.name:
                return t.value
        return None

    def _isinstance(self, obj: ast.expr, classes: ast.expr) -> bool | None:
        if isinstance(obj, ast.Name) and obj.id in self.pairs:
            names = classes.elts if isinstance(classes, ast.Tuple) else [classes]
            return any(isinstance(n, ast.Name) and n.id == "tuple" for n in names)
        for t in self.truths:
            if t.kind == "isinstance_class_contains" and any(t.name in n for n in _class_names(classes)):
                return t.value
        return None

    def _length(self, test: ast.Compare) -> bool | None:
        """`len(x) <op> k` where x's length is known to lie in a range there."""
        left = test.left
        if len(test.ops) != 1 or not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name)
                                      and left.func.id == "len" and len(left.args) == 1
                                      and isinstance(left.args[0], ast.Name)):
            return None
        right, compare = test.comparators[0], _COMPARE.get(type(test.ops[0]))
        if compare is None or not isinstance(right, ast.Constant) or type(right.value) is not int:
            return None
        name = left.args[0].id
        low, high = (2, 2) if name in self.pairs else (1, _UNBOUNDED) if name in self.nonempty else (0, -1)
        if low > high:
            return None
        at_low, at_high = compare(low, right.value), compare(high, right.value)
        # every comparison is monotone over the range except == and !=, which are decided
        # only where the constant lies outside it (or the range is one length)
        if isinstance(test.ops[0], (ast.Eq, ast.NotEq)) and low != high:
            if low <= right.value <= high:
                return None
            return at_low
        return at_low if at_low == at_high else None

    def returns(self, stmts: Sequence[ast.stmt]) -> list[Reached]:
        """The returns reached on the normal path, in order, each with its undecided tests."""
        found: list[Reached] = []
        self._walk(stmts, found, ())
        return found

    def _walk(self, stmts: Sequence[ast.stmt], found: list[Reached], tests: tuple[ast.expr, ...]) -> bool:
        """Collects the returns in `stmts`; False once the block always leaves (returns or raises).

        A loop's body may not run, so it never ends the block; a `try` is read as its body
        and `else`, its handlers as not taken on the normal path.
        """
        for s in stmts:
            if isinstance(s, ast.Return):
                found.append(Reached(s, tests))
                return False
            if isinstance(s, ast.Raise):
                return False
            if isinstance(s, ast.If):
                truth = self.truth(s.test)
                if truth is None:
                    a = self._walk(s.body, found, (*tests, s.test))
                    b = self._walk(s.orelse, found, (*tests, s.test))
                    if not (a or b):
                        return False
                elif not self._walk(s.body if truth else s.orelse, found, tests):
                    return False
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                if not self._walk(s.body, found, tests):
                    return False
            elif isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
                self._walk(s.body, found, tests)
            elif isinstance(s, ast.Try) and not self._walk(s.body + s.orelse, found, tests):
                return False
        return True

    def values(self, value: ast.expr | None,
               tests: tuple[ast.expr, ...] = ()) -> list[tuple[ast.expr | None, tuple[ast.expr, ...]]]:
        """What a returned expression may be on the normal path (`(h, aux) if aux else h`:
        the tuple), each with the undecided tests it sits under."""
        if isinstance(value, ast.IfExp):
            truth = self.truth(value.test)
            inner = (*tests, value.test) if truth is None else tests
            body, orelse = self.values(value.body, inner), self.values(value.orelse, inner)
            return body if truth is True else orelse if truth is False else body + orelse
        return [(value, tests)]


def _class_names(classes: ast.expr) -> list[str]:
    """The names of the classes `isinstance` is given: `C`, `mod.C`, `(C, D)`."""
    return [n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(classes)
            if isinstance(n, (ast.Name, ast.Attribute))]
