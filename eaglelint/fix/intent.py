"""What a check hands its fix planner: the fix it decided on, as plain data (`Finding.intent`).

Why typed: the check that makes a fixable finding has already decided what fixes it: which
class provides the member and under which attribute it is held, whether every class held
has it, how an owner's members are written, which members a marker's wrapper forwards.
The planner renders that decision into lines and decides nothing again; it never reads it
back from a finding's display fields (`wrapped_path`, `provider_class`), which say where a
gap is, not how it is fixed, and are None where a code has no provider to name.

An intent lives from the check to the planner within one run: the planner runs right after
the checks (checks/registry.py `plan_fixes`), and the run cache keeps the planned `Fix`, not
the intent, so a finding read from the cache carries None.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..analysis.sglang.capture_chain import CAPTURE_HOOK
from ..findings import FixIntent

if TYPE_CHECKING:
    from ..analysis.python.entities import ClassEntity
    from ..analysis.python.summary import FunctionInfo
    from .owner import ClassPlan


@dataclass(frozen=True)
class Delegate(FixIntent):
    """A method of the wrapper that calls `member` on self.<attr> (EGL001-EGL003): `function`
    is the signature copied (the provider's own, or a read-only property's for an attribute
    the engine reads), `provider` the class that defines it, whose module imports the
    names the signature reads."""

    member: str
    attr: str
    provider: ClassEntity
    function: FunctionInfo
    every_candidate: bool  # every class self.<attr> may hold provides it: no raising check needed


@dataclass(frozen=True)
class CaptureAsOwner(FixIntent):
    """The capture member written as an owner writes it (EGL001): self.<attr> holds a decoder
    body whose own member only marks layers (capture_chain.py `wrapper_capture_plan`)."""

    attr: str
    member: ClassVar[str] = CAPTURE_HOOK


@dataclass(frozen=True)
class OwnerMember(FixIntent):
    """One member of an owner class's plan (EGL040), made by the check (fix/owner.py
    `plan_class`): the findings of one class share the plan, and its edits are written once."""

    member: str
    plan: ClassPlan


@dataclass(frozen=True)
class Forward:
    """A protocol member the marker's wrapper forwards to its language model: the class whose
    signature it takes (None where that is no plain method), and whether every class the
    checkpoint may pick there has the member."""

    name: str
    source: ClassEntity
    function: FunctionInfo | None
    every_candidate: bool


@dataclass(frozen=True)
class MarkerBase(FixIntent):
    """vLLM's marker protocol appended to the wrapper's bases (EGL030), imported as `lister`'s
    module imports it, and the members forwarded to self.<attr>; `raising`: the checkpoint
    picks the class held, and a forward first raises where the class held lacks the member."""

    marker: str
    lister: ClassEntity
    attr: str
    forwards: tuple[Forward, ...]
    raising: bool

