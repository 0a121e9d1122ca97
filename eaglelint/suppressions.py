"""`# noqa: EGL001`, `# eaglelint: ignore[EGL001]` and `# eaglelint: noqa` (whole file).

Why on the whole statement: a finding is reported at a line (the wrapper's `class`
line, or the call EGL020/EGL021 are about), and a suppression belongs there. A
formatter moves comments within a statement: black turns a long
`class X(nn.Module):  # noqa: EGL001` into a three-line header with the comment on
`):`. So a suppression anywhere on the logical line that holds the finding (for a
class, its header from `class` to the colon), or on a comment or decorator line
directly above it, counts. A bare `# noqa` silences every code, as in flake8 and
ruff; since other tools' codes share the comment, only eaglelint's own codes (EGL...)
are ever reported unused, and an EGL code eaglelint does not have is reported as
unknown. Directives match case-insensitively, as ruff's do.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .analysis.sources import SourceError, read_source, split_lines
from .findings import Finding
from .packs import load_codes

UNUSED_SUPPRESSION = "EGL900"  # a suppression that silenced nothing (--report-unused-suppressions)

_CODES = r"[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*"


@cache
def _directives() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """`# noqa`, `# eaglelint: ignore` and the whole-file directive, compiled on first use: a
    warm run whose files hold none (may_suppress) does not pay for compiling them."""
    return (re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE),
            re.compile(r"#\s*eaglelint:\s*ignore(?![-\w])(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE),
            re.compile(r"#\s*eaglelint:\s*(?:noqa|ignore-file)(?![-\w])"
                       rf"(?::\s*(?P<codes>{_CODES})|\[(?P<listed>[^\]]*)\])?", re.IGNORECASE))


_NAMED_CODE = re.compile(rb":[ \t\f\v]*[a-z]+[0-9]")  # after `noqa`, in lowered bytes: not a bare noqa
OWN = re.compile(r"EGL\d+\Z")
FILE_DIRECTIVE = "eaglelint: noqa"
_OPENING = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE,
                      tokenize.ENCODING, tokenize.ENDMARKER})


@dataclass
class Suppression:
    path: str
    line: int
    column: int
    codes: frozenset[str] | None  # None: every code (a bare directive)
    directive: str  # "noqa", "eaglelint: ignore" or "eaglelint: noqa" (the whole file)
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


@dataclass
class FileSuppressions:
    by_line: dict[int, list[Suppression]]
    lines: list[str]
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)  # line of a multi-line statement -> span
    whole_file: list[Suppression] = field(default_factory=list)

    def span(self, line: int) -> tuple[int, int]:
        """First and last line of the logical line (statement, or compound header) holding `line`."""
        return self.spans.get(line, (line, line))

    def for_line(self, line: int) -> list[Suppression]:
        """Suppressions on the statement of `line`, on a comment or decorator line directly
        above it, and of the whole file."""
        first, last = self.span(line)
        found = [s for n in range(first, last + 1) for s in self.by_line.get(n, [])]
        above = self.lines[first - 2].lstrip() if 2 <= first <= len(self.lines) + 1 else ""
        if above.startswith(("#", "@")):
            found += self.by_line.get(first - 1, [])
        return found + self.whole_file

    def all(self) -> list[Suppression]:
        return [s for sups in self.by_line.values() for s in sups] + self.whole_file


def scan(path: Path, limit: int | None = None) -> FileSuppressions:
    """Every suppression comment of a file (comments found by the tokenizer, never in strings).
    A file larger than `limit` (max-file-size) is not read: it has none."""
    try:
        src = read_source(path, limit)
    except SourceError:
        return FileSuppressions({}, [])
    if not may_suppress(src.raw):
        return FileSuppressions({}, [])
    out = FileSuppressions({}, split_lines(src.text))
    shown = os.path.abspath(path)  # a finding's path: shown relative by the output stage
    noqa, ignore, whole_file = _directives()
    for line, column, text in _comments(src.text, out.spans):
        for match in whole_file.finditer(text):
            codes = _codes(match["codes"] or match["listed"])
            out.whole_file.append(Suppression(shown, line, column + match.start() + 1, codes, FILE_DIRECTIVE))
        for regex, directive in ((noqa, "noqa"), (ignore, "eaglelint: ignore")):
            for match in regex.finditer(text):
                out.by_line.setdefault(line, []).append(
                    Suppression(shown, line, column + match.start() + 1, _codes(match["codes"]), directive))
    return out


def may_suppress(raw: bytes) -> bool:
    """Whether a file's bytes could hold a directive that silences an eaglelint code: any
    `eaglelint`, or a `noqa` not followed on its line by `:CODE` with no `egl` after it.
    The rest (SGLang's `# noqa: F401`) silence other tools only and are never reported
    unused, so the tokenizer, the costly part of a warm run, is not started for them.
    A superset of the directives the tokenizer finds: strings count too, and lowering the
    bytes folds ASCII letters, the only ones that spell `noqa` or `EGL`."""
    lowered = raw.lower()
    if b"eaglelint" in lowered:
        return True
    at = lowered.find(b"noqa")
    while at >= 0:
        end = lowered.find(b"\n", at)
        rest = lowered[at + 4:end if end >= 0 else len(lowered)]
        if not _NAMED_CODE.match(rest) or b"egl" in rest:
            return True  # a bare noqa, or one that may name an EGL code
        at = lowered.find(b"noqa", at + 4)
    return False


def _codes(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    codes = frozenset(c.upper() for c in re.split(r"[\s,]+", text) if c)
    return codes or None


def _comments(text: str, spans: dict[int, tuple[int, int]]):
    """(line, column, text) of each comment; fills `spans` with the multi-line logical lines."""
    start = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.start[1], tok.string
            if start is None and tok.type not in _OPENING:
                start = tok.start[0]
            elif tok.type == tokenize.NEWLINE and start is not None:
                if tok.start[0] > start:
                    spans.update({n: (start, tok.start[0]) for n in range(start, tok.start[0] + 1)})
                start = None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


def comments_and_spans(text: str) -> tuple[dict[int, tuple[int, str]], dict[int, tuple[int, int]]]:
    """Line -> (column, text) of its comment; line -> (first, last) line of its logical line,
    for the lines of multi-line ones."""
    spans: dict[int, tuple[int, int]] = {}
    comments = {line: (column, comment) for line, column, comment in _comments(text, spans)}
    return comments, spans


def noqa_in(comment: str) -> re.Match | None:
    """The `# noqa` directive in a comment, if any (`codes` group: the codes it names)."""
    return _directives()[0].search(comment)


class Suppressor:
    """Applies the suppressions of the files a run reports on, remembering which were used."""

    def __init__(self, limit: int | None = None) -> None:
        self._files: dict[str, FileSuppressions] = {}
        self._limit = limit  # max-file-size: a file the check refused to read is not read here either

    def file(self, path: str | Path) -> FileSuppressions:
        key = os.path.abspath(path)
        if key not in self._files:
            self._files[key] = scan(Path(path), self._limit)
        return self._files[key]

    def suppressed(self, finding: Finding) -> bool:
        sups = self.file(finding.path)
        # a file that cannot be read has no line to annotate: only a whole-file directive covers it
        candidates = sups.for_line(finding.line) if finding.class_name else sups.whole_file
        hit = False
        for sup in candidates:
            if sup.covers(finding.code):
                sup.used.add(finding.code)
                hit = True
        return hit

    def unused(self, paths: list[Path]) -> list[Finding]:
        """EGL900 for each suppression in these files naming an eaglelint code that silenced
        nothing, or one eaglelint does not have."""
        known = load_codes()
        out = []
        for path in paths:
            for sup in self.file(path).all():
                if sup.codes is None:
                    if sup.directive == "noqa" or sup.used:
                        continue  # a bare noqa may be meant for another tool
                    idle = ["(all codes)"]
                else:
                    idle = sorted(c for c in sup.codes if OWN.match(c) and c in known and c not in sup.used)
                unknown = sorted(c for c in sup.codes or () if OWN.match(c) and c not in known)
                if unknown:
                    out.append(_unused(sup, f"unknown rule code {', '.join(unknown)} in `{sup.directive}`; "
                                            "see `eaglelint rules`"))
                if idle:
                    out.append(_unused(sup, f"unused suppression `{sup.directive}` for {', '.join(idle)}: "
                                            "nothing to suppress here; remove it"))
        return out


def _unused(sup: Suppression, message: str) -> Finding:
    return Finding(sup.path, sup.line, sup.column, UNUSED_SUPPRESSION, message)
