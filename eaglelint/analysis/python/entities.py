"""What a name or an expression resolves to: plain data the resolver and its helpers share.

Why apart from resolve.py: the engines' call hooks the resolver hands some references to
(calls.py: SGLang's registry lookups in served.py, vLLM's loaders in vllm_registry.py)
build these too; with the types here, they need the resolver only as a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..syntax.refs import Ref
from .summary import FunctionInfo


@dataclass(frozen=True)
class ClassEntity:
    path: str
    qualname: str


@dataclass(frozen=True)
class FunctionEntity:
    path: str
    name: str
    defined_in: str | None = None  # class qualname for a method
    bound: ClassEntity | None = None  # the class `self` stands for


@dataclass(frozen=True)
class ModuleEntity:
    location: Path


@dataclass(frozen=True)
class InstanceEntity:
    cls: ClassEntity


@dataclass(frozen=True)
class SeqEntity:
    path: str
    owner: ClassEntity | None
    items: tuple[Ref, ...]


@dataclass(frozen=True)
class Unknown:
    reason: str


Entity = ClassEntity | FunctionEntity | ModuleEntity | InstanceEntity | SeqEntity | Unknown


@dataclass(frozen=True)
class Member:
    """Where a class gets a name from: the defining class and the line."""

    owner: ClassEntity
    line: int
    function: FunctionInfo | None
