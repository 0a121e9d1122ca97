"""The aux-hidden-state path: what method presence cannot see (EGL020-EGL023, no automatic fix).

Why: with EAGLE-3, `set_eagle3_layers_to_capture` makes the decoder return
`(hidden_states, aux_hidden_states)` instead of a tensor. A wrapper whose forward
goes through its full language model's own forward (`self.language_model(...)`, or
`general_mm_embed_routine(..., language_model=self.language_model)` with a
`*ForCausalLM`) gets that handled there. A wrapper that runs the decoder itself
(`self.model(...)`, `self.language_model.model(...)`, or a decoder-only
`language_model`) and calls its own `self.logits_processor(...)` must do what a
`*ForCausalLM` does: keep `capture_aux_hidden_states` (set in `__init__`; the engine
reads it on the top-level model too), unpack the tuple when it is set, and pass
the aux hidden states to the logits processor. Otherwise the draft model gets no
aux hidden states, or the logits processor gets a tuple.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass

from ..analysis.python.presence import forwards_some, has_member
from ..analysis.python.resolve import ClassEntity, Resolver
from ..analysis.sglang.drafts import is_draft
from ..analysis.sglang.owners import owner_analysis
from ..analysis.sglang.served import is_served
from ..analysis.sglang.wrappers import is_component, wrapped_candidates
from ..analysis.syntax.class_body import local_nodes
from ..findings import Finding
from .context import WRAPPERS, Context, wrappers

FLAG = "capture_aux_hidden_states"
# Hooks that turn on aux-hidden-state capture (EAGLE-3; DFlash/DSpark reuse the same path).
CAPTURES = ("set_eagle3_layers_to_capture", "set_dflash_layers_to_capture", "set_dspark_layers_to_capture")


CODES = ("EGL020", "EGL021", "EGL022", "EGL023")
SUBJECTS = WRAPPERS
SUBJECT_TEXT = None  # its subjects are the wrappers discovery found
files = None
FIX = None  # no code of this family has an automatic fix


def captures(context: Context) -> tuple[str, ...]:
    """The capture hooks of the selected packs: the path is judged only where one can reach."""
    return tuple(h for h in CAPTURES if h in {m.name for m in context.methods})


def subjects(context: Context) -> list[ClassEntity]:
    return wrappers(context) if captures(context) else []


def check(context: Context, wrapper: ClassEntity) -> list[Finding]:
    """The aux-hidden-state path of a wrapper that a capture hook of the selected packs reaches."""
    resolver, attr, hooks = context.resolver, context.wrappers[wrapper], captures(context)
    checker = context.memo("aux", lambda: AuxChecker(resolver))
    info = resolver.info(wrapper)
    if forwards_some(resolver, wrapper, attr, list(hooks)) or is_component(resolver, wrapper) or \
            is_draft(resolver, wrapper):
        return []  # the engine captures aux hidden states on the target only
    classes, _ = wrapped_candidates(resolver, wrapper, attr)
    return [Finding(os.path.abspath(wrapper.path), p.line, p.column, p.code, p.message, help=p.help,
                    class_name=info.name, wrapper_attribute=attr,
                    wrapped_class=classes[0].qualname if classes else None,
                    entry_class=is_served(resolver, wrapper))
            for p in checker.problems(wrapper, attr, classes, has_member, hooks)]


@dataclass(frozen=True)
class AuxProblem:
    code: str  # EGL020 | EGL021 | EGL022 | EGL023
    line: int
    column: int
    message: str
    help: tuple[str, ...]


def aux_text(code: str, name: str, hook: str) -> tuple[str, tuple[str, ...]]:
    """The message of each of this family's codes, for the wrapper `name` whose capture member is
    `hook`; the help says what EAGLE-3 then gets, and what to write."""
    if code == "EGL020":
        return (f"{name}.forward runs the decoder itself but never unpacks (hidden_states, aux_hidden_states) "
                f"when {FLAG} is set", ("with EAGLE-3 the logits processor gets a tuple",
                                        "unpack it as the *ForCausalLM forward does"))
    if code == "EGL021":
        return (f"{name}.forward calls self.logits_processor without aux_hidden_states",
                ("with EAGLE-3 the draft model gets no aux hidden states",
                 "pass them (after hidden_states, lm_head, forward_batch)"))
    if code == "EGL022":
        return (f"{name} runs the decoder itself but does not set self.{FLAG} in __init__",
                ("the engine and its forward read it on this object",
                 f"set it to False in __init__ and to True in {hook} (or forward the language model's flag "
                 "with a property)"))
    return (f"{name} sets self.{FLAG} only to False",  # EGL023
            (f"its forward never unpacks the aux hidden states that {hook} turns on in the language model",
             f"set it to True in {hook}"))


def _self_attr(node: ast.AST, *names: str) -> bool:
    """`self.a.b` for names ("a", "b")."""
    for name in reversed(names):
        if not (isinstance(node, ast.Attribute) and node.attr == name):
            return False
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _mentions_aux(node: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "aux" in n.id) or (isinstance(n, ast.Attribute) and "aux" in n.attr)
               for n in ast.walk(node))


class AuxChecker:
    def __init__(self, resolver: Resolver):
        self.resolver = resolver
        self.methods = owner_analysis(resolver)

    def problems(self, wrapper: ClassEntity, attr: str, wrapped: list[ClassEntity], has_member,
                 captures: tuple[str, ...] = CAPTURES[:1]) -> list[AuxProblem]:
        hook = next((h for h in captures if has_member(self.resolver, wrapper, h)
                     or any(self.resolver.find_member(c, h) for c in wrapped)), None)
        if hook is None:
            return []  # no capture hook of the selected packs can reach this model
        owner = next((c for c in self.resolver.mro(wrapper) if self.resolver.defines(c, "forward")), None)
        if owner is None:
            return []
        forward = self.methods.method_node(owner, "forward", positions=True)  # that method's lines only
        if forward is None:
            return []
        full = bool(wrapped) and all(self.methods.is_full_model(c) for c in wrapped)
        decoder_runs, logits_calls = self._shape(forward, full, attr)
        if not decoder_runs or not logits_calls:
            return []  # goes through the language model's own forward, or computes no logits itself
        out = []
        name = self.resolver.info(wrapper).name
        run = decoder_runs[0]
        if not self._unpacks(forward):
            out.append(AuxProblem("EGL020", run.lineno, run.col_offset + 1, *aux_text("EGL020", name, hook)))
        if not any(_mentions_aux(arg) for call in logits_calls for arg in [*call.args, *call.keywords]):
            call = logits_calls[0]
            out.append(AuxProblem("EGL021", call.lineno, call.col_offset + 1, *aux_text("EGL021", name, hook)))
        info = self.resolver.info(wrapper)
        if not self._initialises_flag(wrapper):
            out.append(AuxProblem("EGL022", info.line, info.column, *aux_text("EGL022", name, hook)))
        elif self._never_turned_on(wrapper):
            out.append(AuxProblem("EGL023", info.line, info.column, *aux_text("EGL023", name, hook)))
        return out

    def _never_turned_on(self, wrapper: ClassEntity) -> bool:
        """Every assignment of the flag in the wrapper's classes is the constant False."""
        values = []
        for c in self.resolver.mro(wrapper):
            info = self.resolver.info(c)
            if FLAG in info.methods:
                return False  # a property: it says what it says
            values += [v for a in info.self_assigns.get(FLAG, []) for v in a.values]
            values += list(info.attrs.get(FLAG, (0, ()))[1])
        return bool(values) and all(v.kind == "const" and v.name == "False" for v in values)

    @staticmethod
    def _shape(forward: ast.AST, full: bool, attr: str) -> tuple[list[ast.Call], list[ast.Call]]:
        """(calls that run the decoder directly, calls of self.logits_processor)."""
        runs: list[ast.Call] = []
        logits: list[ast.Call] = []
        for node in local_nodes(forward):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if _self_attr(func, "logits_processor"):
                logits.append(node)
            targets = [func.value if isinstance(func, ast.Attribute) and func.attr == "forward" else func]
            targets += [k.value for k in node.keywords if k.arg == "language_model"]
            for target in targets:
                decoder = _self_attr(target, "model") or _self_attr(target, attr, "model")
                if decoder or (not full and _self_attr(target, attr)):
                    runs.append(node)
                    break
        return runs, logits

    @staticmethod
    def _unpacks(forward: ast.AST) -> bool:
        tests_flag = any(isinstance(n, ast.Attribute) and n.attr == FLAG for n in local_nodes(forward))
        unpacks = any(
            isinstance(n, ast.Assign) and any(isinstance(t, ast.Tuple) and _mentions_aux(t) for t in n.targets)
            for n in local_nodes(forward))
        return tests_flag and unpacks

    def _initialises_flag(self, wrapper: ClassEntity) -> bool:
        for c in self.resolver.mro(wrapper):
            info = self.resolver.info(c)
            if FLAG in info.attrs or FLAG in info.methods:
                return True
            init = info.methods.get("__init__")
            if init is None or FLAG not in info.self_assigns:
                continue
            end = min((f.line for f in info.methods.values() if f.line > init.line), default=info.end_line + 1)
            if any(init.line <= a.line < end for a in info.self_assigns[FLAG]):
                return True
        return False
