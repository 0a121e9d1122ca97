"""Labels that several rule families put in their findings' help: the subclasses that
inherit a gap, named once the same way (a class of another file with that file's name).

Why its own module: the member, marker and owner families each name the registered
subclasses that share a finding, and `support` says them after an owner's reason;
written in one place, the four read alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..analysis.python.resolve import ClassEntity


def subclass_labels(cls: ClassEntity, subs: Iterable[ClassEntity]) -> tuple[str, ...]:
    """Each subclass's qualified name, with its file's name where that is not cls's file."""
    return tuple(s.qualname if s.path == cls.path else f"{s.qualname} ({Path(s.path).name})" for s in subs)


def inherited_by(labels: Sequence[str]) -> tuple[str, ...]:
    """The help line that names the subclasses sharing a finding (none where there are none)."""
    return (f"inherited by {', '.join(labels)}",) if labels else ()
