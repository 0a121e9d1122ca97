"""Suppression directives in a file's comments: found as the tokenizer finds them, kept as plain data.

Why its own module, in analysis: finding comments takes a pass over the whole file (a
string that contains `# noqa` is no comment), the dearest part of a warm run. The pass is
one regular expression with the tokenizer's bookkeeping, held to Python's tokenize module
(which takes over wherever the lexer is unsure).
The result depends on the file's bytes alone, so the cache keeps it by their digest, as
it keeps a summary; pipeline/suppressions.py applies it, and `--add-noqa` reads the same comments.
"""

from __future__ import annotations

import io
import re
import sys
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
    """(line, column, text) of each comment; fills `spans` with the multi-line logical lines.
    The lexer below where it is sure to agree with the tokenizer, the tokenizer elsewhere."""
    scanned = scanned_comments(text)
    if scanned is None:
        yield from tokenizer_comments(text, spans)
        return
    found, scanned_spans = scanned
    spans.update(scanned_spans)
    yield from found


def tokenizer_comments(text: str, spans: dict[int, tuple[int, int]]):
    """`comments` by Python's tokenize module: the reference the lexer is held to. A file the
    tokenizer rejects keeps what it yielded before the error."""
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


# What the tokenizer's line loop tells apart, one alternative each, after a run of names,
# numbers, operators, blanks, one-line strings and one-line bracket pairs holding only
# those: a pair opened and closed on one line leaves the depth as it was. A line break
# followed by spaces and a token comes with the blank lines before that token's line and with
# the lines after it that hold only such a run at the same indentation: each of those is a
# logical line of its own, and none changes the indentation. A string ends where the
# tokenizer's own patterns end it (Lib/tokenize.py in 3.11: a prefix does not change where,
# a backslash escapes the next character, an f-string is one string); a quote or backslash
# that starts none of these is a case left to the tokenizer.
_PLAIN = r"[^\n\r#()\[\]{}'\"\\]++"
_ONE_LINE = (r"(?!''')'[^\n'\\]*+(?:\\[^\r\n][^\n'\\]*+)*+'"
             r'|(?!""")"[^\n"\\]*+(?:\\[^\r\n][^\n"\\]*+)*+"')


def _pairs(inside: str) -> str:
    return "|".join(rf"\{opening}(?:{inside})*+\{closing}" for opening, closing in ("()", "[]", "{}"))


_TOKENS = f"{_PLAIN}|{_ONE_LINE}"
_RUN = f"(?:{_TOKENS}|{_pairs(_TOKENS)})*+"
_STRING = "|".join((
    r"'''[^'\\]*+(?:(?:\\.|'(?!''))[^'\\]*+)*+'''",
    r'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""',
    r"(?!''')'[^\n'\\]*+(?:(?:\\\r\n|\\.)[^\n'\\]*+)*+'",  # three quotes start a triple-quoted one
    r'(?!""")"[^\n"\\]*+(?:(?:\\\r\n|\\.)[^\n"\\]*+)*+"',
))


@cache
def _lexeme() -> re.Pattern:
    """Compiled on first use (a few milliseconds): a warm run takes every file's directives
    from the cache."""
    return re.compile(
        _RUN
        + r"(?:(?P<statement>\n(?:[ \t\f]*+\n)*+(?P<indent> *+)(?=[^\t\f#\r\n\\])"
        + rf"(?:{_RUN}\n(?:[ \t\f]*+\n)*+(?P=indent)(?=[^ \t\f#\r\n\\]))*+)"
        r"|(?P<newline>\r?\n)"
        r"|(?P<comment>#[^\r\n]*+)"
        r"|(?P<open>[(\[{])"
        r"|(?P<close>[)\]}])"
        rf"|(?P<string>{_STRING})"
        r"|(?P<continuation>\\\r?\n)"
        r"|(?P<unsure>['\"\\])"
        r"|(?P<end>\Z))",  # so that no search starts again inside a string of the last run
        re.DOTALL)


_LEADING = re.compile(r"[ \t\f]*")
LEXES_LIKE_TOKENIZE = sys.version_info < (3, 12)  # 3.12 tokenizes the insides of f-strings
_UNSURE, _DEDENT = -1, -2  # a line the lexer leaves to the tokenizer; one it raises IndentationError at
_LINE_BREAKS = ("statement", "newline")
_DEPTH = {"open": 1, "close": -1, "end": 0}


def scanned_comments(text: str) -> tuple[list[tuple[int, int, str]], dict[int, tuple[int, int]]] | None:
    """What `tokenizer_comments` yields and fills in, found by one regular expression and the
    tokenizer's own bookkeeping (bracket depth, backslash continuations, indentation, the
    NEWLINE it adds after a last line without one); None where the text holds what this does
    not model (a lone CR, an unterminated string, a stray backslash, an unmatched closing
    bracket, a statement that starts with a backslash continuation), or where Python's
    tokenizer is not 3.11's."""
    if not LEXES_LIKE_TOKENIZE or ("\r" in text and text.count("\r") != text.count("\r\n")):
        return None
    found: list[tuple[int, int, str]] = []
    spans: dict[int, tuple[int, int]] = {}
    indents = [0]
    # the first line of the current logical line: set where a line read as a new statement
    # holds a token, None over blank and comment lines (whose NEWLINE ends nothing)
    start = _statement(text, 0, indents, 1)  # never a dedent
    if start == _UNSURE:
        return None
    line, depth, continued_at = 1, 0, -1
    for match in _lexeme().finditer(text):
        kind = match.lastgroup or ""
        at, end = match.start(kind), match.end()
        if kind in _LINE_BREAKS:
            breaks = text.count("\n", at, end)
            line += breaks
            if depth:
                continue
            if start is not None and line - breaks > start:
                spans.update({n: (start, line - breaks) for n in range(start, line - breaks + 1)})
            if kind == "newline":
                start = _statement(text, end, indents, line)
            else:
                start = line if _indented(match.end("indent") - match.start("indent"), indents) else _DEDENT
            if start is not None and start < 0:  # what came before an IndentationError stands
                return (found, spans) if start == _DEDENT else None
        elif kind == "comment":
            found.append((line, at - text.rfind("\n", 0, at) - 1, match.group(kind)))
        elif kind == "string":
            line += text.count("\n", at, end)
        elif kind in _DEPTH:
            depth += _DEPTH[kind]
            if depth < 0:
                return None
        elif kind == "continuation":
            line += 1
            continued_at = end
        else:
            return None
    if start is not None and not depth and continued_at != len(text):
        _last_newline(text, start, line, spans)  # else the tokenizer's 'EOF in multi-line statement'
    return found, spans


def _last_newline(text: str, start: int, line: int, spans: dict[int, tuple[int, int]]) -> None:
    """The NEWLINE the tokenizer adds after a last line that has no line break and does not
    start with `#`: it ends the logical line that started at `start`."""
    last = text[text.rfind("\n") + 1:]
    if line > start and last and not last.strip().startswith("#"):
        spans.update({n: (start, line) for n in range(start, line + 1)})


def _statement(text: str, line_at: int, indents: list[int], line: int) -> int | None:
    """The tokenizer's step into the line starting at `line_at`, read as a new statement:
    `line` where it holds a token; None for a blank or comment line (no indentation step)
    and at the end; _DEDENT where the tokenizer raises IndentationError; _UNSURE where the
    line starts with a backslash."""
    leading = _LEADING.match(text, line_at)
    at = leading.end() if leading else line_at
    first = text[at:at + 1]
    if first in ("", "#", "\r", "\n"):
        return None
    column = 0
    for char in text[line_at:at]:
        column = (column // 8 + 1) * 8 if char == "\t" else 0 if char == "\f" else column + 1
    if first == "\\":
        return _UNSURE
    return line if _indented(column, indents) else _DEDENT


def _indented(column: int, indents: list[int]) -> bool:
    """A statement at `column`: a deeper block, or the end of blocks down to one at that
    column; False where none is (the tokenizer's 'unindent does not match')."""
    if column == indents[-1]:
        return True
    if column > indents[-1]:
        indents.append(column)
        return True
    if column not in indents:
        return False
    del indents[indents.index(column) + 1:]
    return True


def comments_and_spans(text: str) -> tuple[dict[int, tuple[int, str]], dict[int, tuple[int, int]]]:
    """Line -> (column, text) of its comment; line -> (first, last) line of its logical line,
    for the lines of multi-line ones."""
    spans: dict[int, tuple[int, int]] = {}
    found = {line: (column, comment) for line, column, comment in comments(text, spans)}
    return found, spans


def noqa_in(comment: str) -> re.Match | None:
    """The `# noqa` directive in a comment, if any (`codes` group: the codes it names)."""
    return directive_patterns()[0].search(comment)
