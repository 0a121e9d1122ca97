"""Bytes tests that come before any parsing: which files may hold a wrapper by name.

Why apart from wrappers.py: the run driver asks this before it knows whether the run
is a cache hit, and a hit must load none of the analysis (resolve, summary).
"""

from __future__ import annotations

import re

from ..syntax.textscan import Anchored

# the start of a call that sets an attribute of `self` by name (summary.py SETTERS), up to the name
SETTER_CALL = rb"(?:add_module|register_module|setattr|__setattr__)[ \t]*\(\s*(?:self\s*,\s*)?"
SETTERS = (b"add_module", b"register_module", b"setattr", b"__setattr__")  # what each match of it starts with


def dynamic_attr(setter: str, line: int) -> str:
    """The key a value set under a name that is not a literal is kept under (`setattr(self, name,
    LM(...))`, summary.py): no attribute can be spelled so, and the checks report it as undecidable."""
    return f"<{setter} line {line}>"


def is_dynamic_attr(attr: str) -> bool:
    return attr.startswith("<")


class WrapperAssignTest:
    """Bytes test for `self.<attr> =` / `self.<attr>: T`: files without it cannot hold a wrapper.

    Also `self.language_model, self.vision = ...`: a line that starts with it, a comma and
    then an `=` on that line (a call argument on a line of its own has no `=` after it).
    Three patterns, not one alternation: each starts with the literal `self`, which `re`
    scans for quickly; a pattern anchored at every line start is tried only on files
    where the comma form occurs (an alternation made the warm run 10x slower)."""

    def __init__(self, attrs: tuple[str, ...]):
        alternatives = b"|".join(re.escape(a.encode()) for a in attrs)
        names = rb"self\s*\.\s*(?:" + alternatives + rb")\s*"
        self._plain = re.compile(names + rb"(?::|=(?!=))")
        self._comma = re.compile(names + rb",")
        self._tuple = re.compile(rb"^[ \t]*" + names + rb",[^\n=(]*=(?!=)", re.MULTILINE)
        # set by a call (`self.add_module("language_model", ...)`, `setattr(self, "llm", ...)`)
        # or given by a getter (`@property def language_model(self)`): summary.py reads both.
        # Apart, for the same reason: the getter's pattern starts with the literal `def`, and the
        # setter's is tried only where a setter's name occurs
        self._setter = Anchored(re.compile(SETTER_CALL + rb"[\"'](?:" + alternatives + rb")[\"']"), SETTERS)
        self._getter = re.compile(rb"def[ \t]+(?:" + alternatives + rb")[ \t]*\(")

    def search(self, raw: bytes) -> bool:
        return bool(self._plain.search(raw) or (self._comma.search(raw) and self._tuple.search(raw))
                    or ((b"setattr" in raw or b"_module" in raw) and self._setter.search(raw))
                    or self._getter.search(raw))
