"""`# noqa: EGL001` and `# eaglelint: ignore[EGL001]`: silencing one finding where it is.

Why on the class line: every finding is reported at the wrapper's `class` line, so
that is where a reader looks for the reason it is silenced; the line directly above
also counts when it is a comment or a decorator, for headers too long to annotate.
A bare `# noqa` silences every code, as in flake8 and ruff; since other tools' codes
share the comment, only eaglelint's own codes (EGL...) are ever reported unused.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from .checker import Finding, display_path
from .sources import SourceError, read_source, split_lines

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*eaglelint:\s*ignore\b(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
OWN = re.compile(r"EGL\d+\Z")
NEEDLES = (b"noqa", b"NOQA", b"eaglelint")


@dataclass
class Suppression:
    path: str
    line: int
    column: int
    codes: frozenset[str] | None  # None: every code (a bare directive)
    directive: str  # "noqa" or "eaglelint: ignore"
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


@dataclass
class FileSuppressions:
    by_line: dict[int, list[Suppression]]
    lines: list[str]

    def for_class_line(self, line: int) -> list[Suppression]:
        """Suppressions on the class line, and on the line above when it is a comment or decorator."""
        found = list(self.by_line.get(line, []))
        above = self.lines[line - 2].lstrip() if 2 <= line <= len(self.lines) + 1 else ""
        if above.startswith(("#", "@")):
            found += self.by_line.get(line - 1, [])
        return found


def scan(path: Path) -> FileSuppressions:
    """Every suppression comment of a file (comments found by the tokenizer, never in strings)."""
    try:
        src = read_source(path)
    except SourceError:
        return FileSuppressions({}, [])
    if not any(n in src.raw for n in NEEDLES):
        return FileSuppressions({}, [])
    out: dict[int, list[Suppression]] = {}
    shown = display_path(path)
    for line, column, text in _comments(src.text):
        for match, directive in ((m, "noqa") for m in _NOQA.finditer(text)):
            codes = _codes(match["codes"])
            out.setdefault(line, []).append(Suppression(shown, line, column + match.start() + 1, codes, directive))
        for match in _IGNORE.finditer(text):
            codes = _codes(match["codes"])
            out.setdefault(line, []).append(Suppression(shown, line, column + match.start() + 1, codes,
                                                        "eaglelint: ignore"))
    return FileSuppressions(out, split_lines(src.text))


def _codes(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    codes = frozenset(c.upper() for c in re.split(r"[\s,]+", text) if c)
    return codes or None


def _comments(text: str):
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.start[1], tok.string
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


class Suppressor:
    """Applies the suppressions of the files a run reports on, remembering which were used."""

    def __init__(self) -> None:
        self._files: dict[str, FileSuppressions] = {}

    def file(self, path: str | Path) -> FileSuppressions:
        key = display_path(path)
        if key not in self._files:
            self._files[key] = scan(Path(path))
        return self._files[key]

    def suppressed(self, finding: Finding) -> bool:
        if not finding.class_name:
            return False  # a file that cannot be read has no class line to annotate
        hit = False
        for sup in self.file(finding.path).for_class_line(finding.line):
            if sup.covers(finding.code):
                sup.used.add(finding.code)
                hit = True
        return hit

    def unused(self, paths: list[Path]) -> list[Finding]:
        """EGL900 for each suppression in these files naming an eaglelint code that silenced nothing."""
        out = []
        for path in paths:
            for sups in self.file(path).by_line.values():
                for sup in sups:
                    if sup.codes is None:
                        if sup.directive == "noqa" or sup.used:
                            continue  # a bare noqa may be meant for another tool
                        idle = ["(all codes)"]
                    else:
                        idle = sorted(c for c in sup.codes if OWN.match(c) and c not in sup.used)
                    if idle:
                        out.append(Finding(sup.path, sup.line, sup.column, "EGL900",
                                           f"unused suppression `{sup.directive}` for {', '.join(idle)}: "
                                           "nothing to suppress here; remove it"))
        return out
