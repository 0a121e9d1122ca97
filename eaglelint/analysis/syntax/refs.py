"""Symbolic references: an expression kept as data until it can be resolved across modules.

Why: a summary is taken from one file, but what `DeepseekV3ForCausalLM` or
`language_model_cls(...)` denotes is only known once other modules are read.
"""

from __future__ import annotations

from dataclasses import dataclass

# Ref kinds: name (a global of the module), import (module + attr), attr (attribute
# of another ref), call (result of calling a ref), item (an element of a container),
# self (an attribute of `self`), seq (a literal container), const, unknown (why).


@dataclass(frozen=True)
class Ref:
    kind: str
    name: str = ""
    attr: str = ""
    args: tuple[Ref, ...] = ()
