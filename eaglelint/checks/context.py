"""What one check run shares between the checks: the project, the files read, the
selected members and packs, the wrappers found, and per-check memos.

Why a type of its own: every check family takes it (`check(context, cls)`), and the
registry renews it after an internal error, when caches may hold half-made answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..analysis.capture.wrapper_attrs import DEFAULT_WRAPPER_ATTRS
from ..analysis.python.project import CHECK_RESOLVER, Project
from ..analysis.python.resolve import ClassEntity, Resolver
from ..packs import Interface, InterfaceMethod

T = TypeVar("T")
WRAPPERS = "wrappers"  # what the member, aux and marker families judge


@dataclass
class Context:
    project: Project
    raws: dict[Path, bytes]  # the files given, as read: what the bytes tests look at
    methods: list[InterfaceMethod]  # one entry per member name of the selected SGLang packs
    interfaces: tuple[Interface, ...]
    wrappers: dict[ClassEntity, str]  # wrapper class -> the attribute that holds its model
    held_names: tuple[str, ...] = DEFAULT_WRAPPER_ATTRS  # attributes that make a wrapper by name
    # every attribute some file of the tree assigns a language model (held.py HeldIndex), with held_names
    held_attrs: frozenset[str] = frozenset(DEFAULT_WRAPPER_ATTRS)
    resolver: Resolver = field(init=False)
    memos: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.renew()

    def renew(self) -> None:
        """A fresh resolver and no memos: after an internal error they may hold half-made answers."""
        self.resolver = Resolver(self.project)
        self.memos = {}
        # the stages after the check read the same classes: they ask this resolver's analyses
        # (analysis/owners.py `checked_analysis`)
        self.project.analyses[CHECK_RESOLVER] = (len(self.project.errors), self.resolver)

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """One value per run (and per renewal) for `key`, made on first use."""
        if key not in self.memos:
            self.memos[key] = make()
        return self.memos[key]


def wrappers(context: Context) -> list[ClassEntity]:
    """The wrapper classes found in the given files, in the order found."""
    return list(context.wrappers)
