"""Render one delegating method from the wrapped method's own signature.

Why the real signature: the engine calls these methods positionally and by keyword
(`set_eagle3_layers_to_capture(layer_ids)`, `set_eagle3_layers_to_capture()`), so the
delegate must accept exactly what the wrapped method accepts and pass it on unchanged.

Why the default style never goes silent: the engine asks the wrapper whether it has a
capture hook before it starts EAGLE-3. A delegation that quietly does nothing when the
held model lacks the method (a wrapper that may hold InternLM2, which has none) turns
a clear launch failure into a draft model running on the wrong hidden states. So a
delegation is a plain call where every class the wrapper may hold provides the member,
and otherwise checks and raises an AttributeError that names the wrapper, the member
and the class actually held. The silent `guard` form exists only when asked for by name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .edits import NotFixable
from .styles import DEFAULT_STYLE, STYLES

if TYPE_CHECKING:  # annotations only
    from ..analysis.python.summary import FunctionInfo, Param

MAX_LINE = 88  # ruff's and black's default: every line a fix writes, delegation or import, fits it
# decorators of a wrapped member that a delegating instance method cannot stand in for
_REFUSED_KINDS = ("classmethod", "staticmethod", "accessor", "abstractmethod")


@dataclass(frozen=True)
class Delegation:
    wrapper: str
    attr: str
    method: FunctionInfo
    returns_value: bool
    style: str = DEFAULT_STYLE
    drop_annotations: frozenset[str] = frozenset()  # params whose annotation cannot be imported
    drop_return_annotation: bool = False
    every_candidate: bool = True  # every class the attribute may hold provides the member


def _one_line(text: str | None) -> str | None:
    if text is None or "\n" not in text:
        return text
    try:
        return ast.unparse(ast.parse(text.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(text.split())


def _param_text(p: Param, drop_annotation: bool) -> str:
    stars = {"vararg": "*", "varkw": "**"}.get(p.kind, "")
    text = stars + p.name
    annotation = None if drop_annotation else _one_line(p.annotation)
    if annotation:
        text += f": {annotation}"
    if p.default is not None:
        default = _one_line(p.default)
        text += f" = {default}" if annotation else f"={default}"
    return text


def signature_parts(d: Delegation) -> list[str]:
    params = list(d.method.params)
    if params and params[0].kind in ("pos", "posonly"):
        params = params[1:]  # the wrapped method's `self`
    parts = ["self"]
    has_posonly = any(p.kind == "posonly" for p in params)
    has_vararg = any(p.kind == "vararg" for p in params)
    for i, p in enumerate(params):
        if p.kind == "kwonly" and not has_vararg and (i == 0 or params[i - 1].kind != "kwonly"):
            parts.append("*")
        parts.append(_param_text(p, p.name in d.drop_annotations))
        if has_posonly and p.kind == "posonly" and (i + 1 == len(params) or params[i + 1].kind != "posonly"):
            parts.append("/")
    return parts


def call_arguments(method: FunctionInfo) -> str:
    params = list(method.params)
    if params and params[0].kind in ("pos", "posonly"):
        params = params[1:]
    out = []
    for p in params:
        if p.kind in ("pos", "posonly"):
            out.append(p.name)
        elif p.kind == "vararg":
            out.append(f"*{p.name}")
        elif p.kind == "kwonly":
            out.append(f"{p.name}={p.name}")
        else:
            out.append(f"**{p.name}")
    return ", ".join(out)


def _decorator_kind(method: FunctionInfo) -> str | None:
    for dec in method.decorators:
        name = dec.split("(")[0].strip()
        if name in ("property", "functools.cached_property", "cached_property"):
            return "property"
        if name in ("classmethod", "staticmethod", "abstractmethod", "abc.abstractmethod"):
            return name.split(".")[-1]
        if name.endswith(".setter") or name.endswith(".getter") or name.endswith(".deleter"):
            return "accessor"
    return None


def refusal(method: FunctionInfo) -> str | None:
    """Why no delegation can be written for this wrapped method, or None.

    The checker asks this too, so that a finding says `fixable` only where fix writes it."""
    kind = _decorator_kind(method)
    if kind in _REFUSED_KINDS:
        return f"the wrapped {method.name} is a {kind}; delegate it by hand"
    return None


def render(d: Delegation, indent: str, step: str) -> list[str]:
    """Lines (no line endings) of the delegating method, at class-body indentation `indent`."""
    if d.style not in STYLES:
        raise NotFixable(f"unknown fix style {d.style!r}")
    why = refusal(d.method)
    if why is not None:
        raise NotFixable(why)
    kind = _decorator_kind(d.method)
    name, target = d.method.name, f"self.{d.attr}"
    body = indent + step
    if kind == "property":
        return [f"{indent}@property", f"{indent}def {name}(self):", f"{body}return {target}.{name}"]
    annotation = None if d.drop_return_annotation else _one_line(d.method.return_annotation)
    ret = f" -> {annotation}" if annotation else ""
    prefix = "async def" if d.method.is_async else "def"
    head = f"{'await ' if d.method.is_async else ''}{target}.{name}"
    args = call_arguments(d.method)
    lines = _def_lines(prefix, name, signature_parts(d), ret, indent, step)
    returns = d.returns_value or d.method.returns_value
    lead = "return " if returns else ""
    if d.style == "plain" or (d.style == "raise" and d.every_candidate):
        lines += _call_lines(f"{body}{lead}{head}", args, body, step)
    elif d.style == "raise" or returns:
        # A silent None would break `embed, head = model.get_embed_and_head()` far from here.
        lines += [f'{body}if not hasattr({target}, "{name}"):']
        lines += _raise_lines(d, target, name, body + step, step)
        lines += _call_lines(f"{body}{lead}{head}", args, body, step)
    else:
        lines += [f'{body}if hasattr({target}, "{name}"):']
        lines += _call_lines(f"{body}{step}{head}", args, body + step, step)
    return lines


def _raise_lines(d: Delegation, target: str, name: str, indent: str, step: str) -> list[str]:
    """`raise AttributeError(...)` naming the wrapper, the member and the class held at run time."""
    first = f'f"{d.wrapper}.{d.attr} holds {{type({target}).__name__}}, "'
    second = f'"which has no {name}()"'
    whole = first[:-1] + second[1:]
    lines = _call_lines(f"{indent}raise AttributeError", whole, indent, step)
    if len(lines) == 1 or len(lines[1].expandtabs(4)) <= MAX_LINE:
        return lines
    return [f"{indent}raise AttributeError(", f"{indent}{step}{first}", f"{indent}{step}{second}", f"{indent})"]


def _call_lines(head: str, args: str, indent: str, step: str) -> list[str]:
    """`head(args)` on one line, or black's shape when that is too long."""
    one = f"{head}({args})"
    if not args or len(one.expandtabs(4)) <= MAX_LINE:
        return [one]
    return [f"{head}(", f"{indent}{step}{args}", f"{indent})"]


def _def_lines(prefix: str, name: str, parts: list[str], ret: str, indent: str, step: str) -> list[str]:
    one = f"{indent}{prefix} {name}({', '.join(parts)}){ret}:"
    if len(one.expandtabs(4)) <= MAX_LINE:
        return [one]
    inner = ", ".join(parts)
    two = f"{indent}{step}{inner}"
    if len(two.expandtabs(4)) <= MAX_LINE:
        return [f"{indent}{prefix} {name}(", two, f"{indent}){ret}:"]
    lines = [f"{indent}{prefix} {name}("]
    lines += [f"{indent}{step}{p}," for p in parts]
    lines.append(f"{indent}){ret}:")
    return lines
