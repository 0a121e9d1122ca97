"""The capture chain's vocabulary, shared by both engines' chains: where something happens
(`Place`), what a capture member writes (`Write`), a broken link (`Broken`) and the chain
of one served class (`Chain`), and the method reader a chain is given (`Methods`).

Why a room of its own: SGLang's chain (analysis/sglang/capture_chain.py) and vLLM's
(analysis/vllm/vllm_chain.py) follow different engine calls through the same kinds of
links, and report them alike; neither engine's room may import the other's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from ..python.entities import ClassEntity

Fn = ast.FunctionDef | ast.AsyncFunctionDef
Path_ = tuple[str, ...]  # attributes from the served object: () is self, ("model",) is self.model


def self_path(node: ast.AST, env: dict[str, Path_]) -> Path_ | None:
    """The object path of `self.a.b` (("a", "b")), or of a local bound to one (`env`: the
    locals bound to an object path, `self` to ()): what both chains call the object a member
    writes on."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id] + tuple(reversed(names))
    return None


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
    empty: bool = False  # writes None or an empty collection (a run with None that captures nothing)
    offset: int | None = None  # the written ids are the engine's plus this (`[i + 1 for i in ids]`: 1)
    from_ids: bool = False  # the value written is built from the engine's ids (its offset may be unread)
    # adds to or takes from what the object held (`.append(k)`, `.remove(k)`, `.sort()`): what it holds
    # after is not read
    partial: bool = False
    truth: bool | None = True  # the value written as a test on this run (False: None, False, 0, empty); None: unknown
    certain: bool = True  # made on every path of this run (under no test the walk cannot decide)
    in_place: bool = False  # changes the object the attribute holds (`x[:] = ...`, `x.extend(...)`), not the attribute


class Link(Enum):
    """A link of the chain (analysis/sglang/capture_chain.py's docstring): its letter, as the
    findings and the rules reference name it, and what holds where it holds."""

    CALL = "b", "the member accepts the engine's call, and None means the default layers"
    WRITE = "c", "the member writes what decides capture on an object the served model holds"
    READ = "d", "the decoder's forward decides capture by what the member wrote"
    RETURN = "e", "the decoder's forward returns the aux hidden states on the normal path"
    UNPACK = "f", "the forward that makes logits unpacks the decoder's result under a test the member makes true"
    PASS = "g", "that forward unpacks them once and hands them to the logits processor"

    def __init__(self, letter: str, meaning: str):
        self.letter = letter
        self.meaning = meaning


@dataclass(frozen=True)
class Broken:
    link: Link
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
    # where the member raises on purpose for every decoder it is bound to (the member rules
    # judge that, not the links): the engine's call fails there
    refuses: Place | None = None

    @property
    def holds(self) -> bool | None:
        if self.broken:
            return False
        return None if self.unknown else True


class Methods(Protocol):
    """What reads one method's syntax tree with the file's positions (owners.OwnerAnalysis)."""

    def method_node(self, cls: ClassEntity, name: str, positions: bool = False) -> Fn | None: ...
