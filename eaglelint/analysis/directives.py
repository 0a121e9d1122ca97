"""Suppression directives in a file's comments: found by the tokenizer, kept as plain data.

Why its own module, in analysis: finding comments takes a tokenizer pass over the whole
file (a string that contains `# noqa` is no comment), the dearest part of a warm run.
The result depends on the file's bytes alone, so the cache keeps it by their digest, as
it keeps a summary; pipeline/suppressions.py applies it, and `--add-noqa` reads the same comments.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from functools import cache

from .sources import split_lines

_CODES = r"[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*"
NOQA = "noqa"
IGNORE = "eaglelint: ignore"
FILE_DIRECTIVE = "eaglelint: noqa"
DIRECTIVE_KINDS = (NOQA, IGNORE, FILE_DIRECTIVE)
_NAMED_CODE = re.compile(rb":[ \t\f\v]*[a-z]+[0-9]")  # after `noqa`, in lowered bytes: not a bare noqa
_OPENING = frozenset({tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE,
                      tokenize.ENCODING, tokenize.ENDMARKER})


@cache
def directive_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """`# noqa`, `# eaglelint: ignore` and the whole-file directive, compiled on first use: a
    warm run that finds every file's directives in the cache does not pay for compiling them."""
    return (re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE),
            re.compile(r"#\s*eaglelint:\s*ignore(?![-\w])(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE),
            re.compile(r"#\s*eaglelint:\s*(?:noqa|ignore-file)(?![-\w])"
                       rf"(?::\s*(?P<codes>{_CODES})|\[(?P<listed>[^\]]*)\])?", re.IGNORECASE))


@dataclass(frozen=True)
class Directive:
    line: int
    column: int  # 1-based column of the directive's `#`
    codes: tuple[str, ...] | None  # upper-cased, sorted; None: every code (a bare directive)
    kind: str  # one of DIRECTIVE_KINDS
    own_line: bool  # its line holds only comments, or is a decorator: it covers the statement below


@dataclass(frozen=True)
class DirectiveScan:
    """What suppression needs of one file: its directives, and the multi-line logical lines
    (first, last) that hold one or start right below one. A line in no listed span is
    judged as its own statement: a span with no directive in or above it adds nothing."""

    directives: tuple[Directive, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()


def may_suppress(raw: bytes) -> bool:
    """Whether a file's bytes could hold a directive that silences an eaglelint code: any
    `eaglelint`, or a `noqa` not followed on its line by `:CODE` with no `egl` after it.
    The rest (SGLang's `# noqa: F401`) silence other tools only and are never reported
    unused, so the tokenizer is not started for them. A superset of the directives the
    tokenizer finds: strings count too, and lowering the bytes folds ASCII letters, the
    only ones that spell `noqa` or `EGL`."""
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


def scan_directives(raw: bytes, text: str) -> DirectiveScan:
    """The directives of a file whose bytes are `raw`, decoded as `text`."""
    if not may_suppress(raw):
        return DirectiveScan()
    spans: dict[int, tuple[int, int]] = {}
    noqa, ignore, whole_file = directive_patterns()
    lines = split_lines(text)
    found: list[Directive] = []
    for line, column, comment in comments(text, spans):
        stripped = lines[line - 1].lstrip() if line <= len(lines) else ""
        own = stripped.startswith(("#", "@"))
        for match in whole_file.finditer(comment):
            found.append(Directive(line, column + match.start() + 1, codes_of(match["codes"] or match["listed"]),
                                   FILE_DIRECTIVE, own))
        for regex, kind in ((noqa, NOQA), (ignore, IGNORE)):
            found += [Directive(line, column + match.start() + 1, codes_of(match["codes"]), kind, own)
                      for match in regex.finditer(comment)]
    at = {d.line for d in found}
    kept = sorted({span for span in spans.values()
                   if span[0] - 1 in at or any(n in at for n in range(span[0], span[1] + 1))})
    return DirectiveScan(tuple(found), tuple(kept))


def codes_of(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    codes = tuple(sorted({c.upper() for c in re.split(r"[\s,]+", text) if c}))
    return codes or None


def comments(text: str, spans: dict[int, tuple[int, int]]):
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
    found = {line: (column, comment) for line, column, comment in comments(text, spans)}
    return found, spans


def noqa_in(comment: str) -> re.Match | None:
    """The `# noqa` directive in a comment, if any (`codes` group: the codes it names)."""
    return directive_patterns()[0].search(comment)
