"""What a class's `__getattr__` forwards, name by name.

Why not "has a `__getattr__` that mentions `self.language_model`": SGLang-style
`__getattr__`s forward only some names (an allow-list, a prefix test), raise for
others, or forward to another attribute. Python calls `__getattr__` only for names
the class lacks, and what the engine then gets depends on the branch taken for that
name. So the body is compiled, once per summary, into a small decision tree over the
name (plain tuples: summaries are cached data), and later asked about each interface
member. A branch eaglelint cannot decide is an answer of its own ("unknown", why).

Tree nodes: ("forward", attr) | ("refuse", why) | ("unknown", why)
| ("if", cond, then, else) | ("try", body, handler).
Conditions: ("in", names) | ("prefix", texts) | ("suffix", texts) | ("held_has",)
| ("not", cond) | ("and", conds) | ("or", conds) | ("unknown", why).
"""

from __future__ import annotations

import ast

Node = tuple
_CATCHES = {"AttributeError", "Exception", "BaseException", "KeyError"}
_INSTANCE_STORES = {"__dict__", "_modules", "_parameters", "_buffers"}


def string_set(node: ast.AST | None) -> frozenset[str] | None:
    """The strings of a literal tuple/list/set (or frozenset(...)/set(...) of one), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set") \
            and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        texts = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return frozenset(texts) if len(texts) == len(node.elts) else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    return None


def compile_getattr(fn: ast.FunctionDef | ast.AsyncFunctionDef, constants: dict[str, frozenset[str]]) -> Node:
    """The decision tree of one `__getattr__(self, name)`; `constants` are the string
    collections of its class and module (`_FORWARDED = ("a", "b")`)."""
    return _Compiler(fn, constants).block(fn.body, ("unknown", "__getattr__ returns None for other names"))


def forwarded(node: Node, name: str) -> Node:
    """("forward", attr), ("refuse", why) or ("unknown", why) for `name`."""
    while True:
        kind = node[0]
        if kind == "if":
            truth = _truth(node[1], name)
            if isinstance(truth, str):
                return ("unknown", truth)
            node = node[2] if truth else node[3]
        elif kind == "try":
            first = forwarded(node[1], name)
            if first[0] != "refuse":
                return first
            node = node[2]
        else:
            return node


def _truth(cond: tuple, name: str) -> bool | str:
    kind = cond[0]
    if kind == "in":
        return name in cond[1]
    if kind == "prefix":
        return name.startswith(cond[1])
    if kind == "suffix":
        return name.endswith(cond[1])
    if kind == "held_has":
        return True  # asked only about members the held class provides
    if kind == "not":
        inner = _truth(cond[1], name)
        return inner if isinstance(inner, str) else not inner
    if kind in ("and", "or"):
        values = [_truth(c, name) for c in cond[1]]
        decided = [v for v in values if not isinstance(v, str)]
        if kind == "and" and False in decided:
            return False
        if kind == "or" and True in decided:
            return True
        unknown = [v for v in values if isinstance(v, str)]
        return unknown[0] if unknown else kind == "and"
    return cond[1]


class _Compiler:
    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, constants: dict[str, frozenset[str]]):
        params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        self.self_name = params[0] if params else "self"
        self.param = params[1] if len(params) > 1 else None
        self.constants = constants
        self.aliases: dict[str, str] = {}
        bound: dict[str, int] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                bound[target] = bound.get(target, 0) + 1
                attr = self.held(node.value)
                if attr is not None:
                    self.aliases[target] = attr
        self.aliases = {k: v for k, v in self.aliases.items() if bound[k] == 1}

    def block(self, stmts: list[ast.stmt], rest: Node) -> Node:
        node = rest
        for stmt in reversed(stmts):
            node = self.stmt(stmt, node)
        return node

    def stmt(self, s: ast.stmt, rest: Node) -> Node:
        if isinstance(s, ast.Return):
            return self.returned(s.value, s.lineno)
        if isinstance(s, ast.Raise):
            return ("refuse", f"raises at line {s.lineno}")
        if isinstance(s, ast.If):
            return ("if", self.cond(s.test), self.block(s.body, rest), self.block(s.orelse, rest))
        if isinstance(s, ast.Try):
            body = self.block(s.body + s.orelse, rest)
            for handler in s.handlers:
                if handler.type is None or any(n.id in _CATCHES for n in ast.walk(handler.type)
                                               if isinstance(n, ast.Name)):
                    return ("try", body, self.block(handler.body, rest))
            return body
        if isinstance(s, (ast.Pass, ast.Expr)) or (isinstance(s, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id in self.aliases for t in s.targets)):
            return rest
        return ("unknown", f"line {s.lineno}: a {type(s).__name__.lower()} statement in __getattr__")

    def returned(self, value: ast.AST | None, line: int) -> Node:
        if isinstance(value, ast.Call) and self.is_name(value.args[1] if len(value.args) > 1 else None) \
                and isinstance(value.func, ast.Name) and value.func.id == "getattr":
            attr = self.held(value.args[0])
            if attr is not None:
                return ("forward", attr)
            if self.is_self(value.args[0]):
                return ("refuse", f"line {line}: looks the name up on the wrapper itself")
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in ("__getattr__", "__getattribute__"):
            args = [a for a in value.args if not self.is_self(a)]
            if args and self.is_name(args[0]):
                attr = self.held(value.func.value)
                if attr is not None:
                    return ("forward", attr)
                return ("refuse", f"line {line}: hands the name to a base class's lookup")
        return ("unknown", f"line {line}: returns something eaglelint cannot follow")

    def is_name(self, node: ast.AST | None) -> bool:
        return isinstance(node, ast.Name) and node.id == self.param

    def is_self(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == self.self_name

    def held(self, node: ast.AST) -> str | None:
        """The attribute of self an expression reads: `self.lm`, `self.__dict__["lm"]`,
        `self._modules.get("lm")`, `super().__getattr__("lm")`, or a local bound to one."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute) and self.is_self(node.value) and node.attr not in _INSTANCE_STORES:
            return node.attr
        key = None
        if isinstance(node, ast.Subscript) and self.store(node.value):
            key = node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get" and self.store(func.value):
                key = node.args[0]
            elif isinstance(func, ast.Attribute) and func.attr in ("__getattr__", "__getattribute__") \
                    and not self.is_name(node.args[-1]):
                key = node.args[-1]
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value
        return None

    def store(self, node: ast.AST) -> bool:
        """`self.__dict__`, `self._modules`, `vars(self)`: where instance attributes live."""
        if isinstance(node, ast.Attribute) and self.is_self(node.value) and node.attr in _INSTANCE_STORES:
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" \
            and len(node.args) == 1 and self.is_self(node.args[0])

    def cond(self, test: ast.expr) -> tuple:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return ("not", self.cond(test.operand))
        if isinstance(test, ast.BoolOp):
            return ("and" if isinstance(test.op, ast.And) else "or", tuple(self.cond(v) for v in test.values))
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, op, right = test.left, test.ops[0], test.comparators[0]
            if self.is_name(right) and isinstance(op, (ast.Eq, ast.NotEq)):
                left, right = right, left
            if self.is_name(left):
                names = self.names(right) if isinstance(op, (ast.In, ast.NotIn)) else \
                    string_set(right) if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) \
                    else None
                if names is not None:
                    inside = ("in", names)
                    return ("not", inside) if isinstance(op, (ast.NotIn, ast.NotEq)) else inside
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and self.is_name(test.func.value) \
                and test.func.attr in ("startswith", "endswith") and len(test.args) == 1:
            texts = string_set(test.args[0])
            if texts is not None:
                return ("prefix" if test.func.attr == "startswith" else "suffix", tuple(sorted(texts)))
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
                and len(test.args) == 2 and self.is_name(test.args[1]) and self.held(test.args[0]) is not None:
            return ("held_has",)
        return ("unknown", f"line {test.lineno}: a condition on the name eaglelint cannot decide")

    def names(self, node: ast.AST) -> frozenset[str] | None:
        literal = string_set(node)
        if literal is not None:
            return literal
        if self.store(node):
            return frozenset()  # instance attributes: never a class's method names
        key = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) else None
        return self.constants.get(key) if key else None
