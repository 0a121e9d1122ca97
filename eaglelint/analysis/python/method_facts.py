"""What a method tells about how an object is built: what it passes up to its base's
method (`super().__init__(..., language_model_cls=X)`), and whether it only raises; and
whether it reads the hidden states the engine hands a draft model.

Why: a class held by a constructor parameter is chosen by the subclass that passes it
up (resolve.py), and a builder that only raises NotImplementedError means the class
calling it is abstract: only subclasses overriding the builder are ever built. A forward
that reads the speculative batch's hidden states runs on the target's: a draft's (roles.py).
Which read that is, is the engine's fact (calls.py `DRAFT_READ`), given as data.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..syntax.refs import Ref
from ..syntax.scope import nodes_of
from .exprs import expression_refs

CONSTRUCTOR = "__init__"


@dataclass(frozen=True)
class HeldRead:
    """A read of `<x>.<holder>.<attr>`, or of `<attr>` on a local named `holder`: an engine's
    speculative worker hands a draft model its target's hidden states so. `text` finds the
    text of one (maybe across lines): a module without it has no function reads_held finds,
    and is not walked for one."""

    holder: str
    attr: str
    text: re.Pattern[str]


def only_raises_not_implemented(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An abstract builder (`def init_llm(...): raise NotImplementedError`, MiniCPM-V's base):
    a class whose constructor calls it never exists; only subclasses that override it do."""
    body = fn.body[1:] if fn.body and isinstance(fn.body[0], ast.Expr) and isinstance(
        fn.body[0].value, ast.Constant) else fn.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def super_calls(name: str, stmts: list[ast.stmt], scope_of) -> tuple[Ref, ...]:
    """What a constructor passes up to its base's: one `super` Ref per `super().__init__(...)`
    or `Base.__init__(self, ...)` statement with arguments; its args are `arg` Refs named
    by keyword or position (`*` for a starred argument), a `Base.__init__` call's first
    arg being `target` (the base). `scope_of()` gives the local scope, built only if needed.
    Only constructors: the loader's call is the one whose arguments are known."""
    out: list[Ref] = []
    for stmt in stmts if name == CONSTRUCTOR else ():
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) \
                or call.func.attr != CONSTRUCTOR or not call.keywords and all(
                    isinstance(a, ast.Name) and a.id == "self" for a in call.args):
            continue  # passes nothing (`super().__init__()`, `nn.Module.__init__(self)`)
        target, args = call.func.value, list(call.args)
        if isinstance(target, ast.Call) and isinstance(target.func, ast.Name) and target.func.id == "super":
            head: list[Ref] = []
        elif args and isinstance(args[0], ast.Name) and args[0].id == "self" and isinstance(
                target, (ast.Name, ast.Attribute)):
            head, args = [Ref("target", args=tuple(expression_refs(target, None)))], args[1:]
        else:
            continue
        scope = scope_of()
        passed = [Ref("arg", "*" if isinstance(a, ast.Starred) else str(i), args=tuple(expression_refs(a, scope)))
                  for i, a in enumerate(args)]
        passed += [Ref("arg", k.arg or "*", args=tuple(expression_refs(k.value, scope))) for k in call.keywords]
        out.append(Ref("super", call.func.attr, args=tuple(head + passed)))
    return tuple(out)


def reads_held(fn: ast.FunctionDef | ast.AsyncFunctionDef, read: HeldRead) -> bool:
    """The function makes the read (SGLang's: `<batch>.spec_info.hidden_states`, or through a
    local named `spec_info`): the target's hidden states, which the engine's speculative worker
    puts on the batch it runs a draft model on (`forward_batch.spec_info.hidden_states` in
    every EAGLE, MTP and NextN draft). Asked only of modules whose text has `read.text`."""
    for node in nodes_of(fn):
        if isinstance(node, ast.Attribute) and node.attr == read.attr:
            held = node.value
            if isinstance(held, ast.Attribute) and held.attr == read.holder or \
                    isinstance(held, ast.Name) and held.id == read.holder:
                return True
    return False
