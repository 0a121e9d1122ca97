"""The lexer that finds comments for suppression directives (`scanned_comments`) agrees with
Python's tokenize module (`tokenizer_comments`, the reference): the same comments, at the
same line and column, and the same multi-line logical lines, on every file of real
releases, on hand-written cases that sit where the two could part, and on snippets drawn
by hypothesis. Where the lexer declines (None), `comments` takes the tokenizer's answer.
"""

import random

import pytest
from fetch_sglang import release_root, vllm_root
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eaglelint.analysis.syntax.directives import (
    LEXES_LIKE_TOKENIZE,
    comments,
    scan_directives,
    scanned_comments,
    tokenizer_comments,
)
from eaglelint.analysis.syntax.sources import decode_source


def reference(text: str):
    spans: dict[int, tuple[int, int]] = {}
    return list(tokenizer_comments(text, spans)), spans


def through_comments(text: str):
    spans: dict[int, tuple[int, int]] = {}
    return list(comments(text, spans)), spans


# (name, text, whether the lexer answers itself); each a place where a lexer that missed one
# of the tokenizer's rules would find another comment, column or logical line.
CASES = [
    ("hash_in_strings", 'x = "a # b" + \'# c\'  # real\ny = "#"\n', True),
    ("nested_quotes", 's = "it\'s # here" + \'say "#"\'  # c\nt = "\\"#\\""  # d\n', True),
    ("triple_with_hash", 'd = """\n# inside\n  # also inside\n"""  # after\nx = 1\n', True),
    ("triple_escaped_quotes", "t = '''a\\''' # in\n\\'''' # out\nu = \"\"\"a\"\"\\\"b\"\"\"  # c\n", True),
    ("triple_quote_runs", "v = ''''a'''  # c\nw = ''''''  # d\nz = \"\"\"\"\"\"  # e\n", True),
    ("empty_strings_then_triple", "a = '' ''  # c\nb = ''''''\n# d\n", True),
    ("prefixes", "a = rb'\\'' # c\nb = F\"{x!r}\" # d\nc = Rb\"\"\"#\n\"\"\" # e\nd = f'{\"#\"}'  # f\n", True),
    ("names_against_quotes", "a = xr'#' + 1if b else'#'  # c\nc = u'#'br'#'  # d\n", True),
    ("single_quoted_continued", "s = 'abc\\\ndef # in'  # c\nt = \"a\\\r\n# in\"  # d\n", True),
    ("backslash_continuation", "x = 1 + \\\n    2  # c\ny = 3\n", True),
    ("comment_line_after_continuation", "x = 1 + \\\n# c\ny = (2,\n3)\n", True),
    ("blank_line_after_continuation", "x = 1 + \\\n\ny = 2\n", True),
    ("continuation_inside_brackets", "f(a, \\\n  b)  # c\n", True),
    ("brackets_over_lines", "f(a,  # one\n  [b,  # two\n   {c: d}],\n)  # three\ng = 1\n", True),
    ("nested_one_line_brackets", "f(g(h(i(1), [2]), {3: (4,)}))  # c\nx = [(\n1)]\n", True),
    ("decorator_and_def", "@dec(\n    a)  # c\ndef f(x,\n      y):  # d\n    return (x +\n            y)\n", True),
    ("crlf", "x = (1,\r\n  2)  # c\r\n# d\r\nif x:\r\n    y = 1\r\n", True),
    ("form_feeds", "\fx = 1  # c\n\f\n  \fy = (\n2)  # d\nz = 3 \f # e\n", True),
    ("tabs", "if x:\n\ty = (1,\n\t  2)  # c\n        z = 3  # d\n", True),
    ("tab_and_spaces_dedent", "if x:\n    if y:\n\tz = 1  # c\n    w = 2  # d\n", True),
    ("no_final_newline", "x = (1,\n 2)  # c", True),
    ("comment_last_no_newline", "x = [\n1]\\\n# c", True),
    ("spaces_last_no_newline", "x = (1,\n2) + \\\n   ", True),
    ("blank_spaces_last", "x = (1,\n2)\n   ", True),
    ("only_a_comment", "# c", True),
    ("empty", "", True),
    ("blank_lines_between", "def f():\n    x = 1\n\n    \n    y = (\n2)  # c\n\n\nz = 3\n", True),
    ("indentation_error", "if x:\n    y = (1,\n2)  # a\n  z = 2  # b\n", True),
    ("indentation_error_after_blank", "if x:\n\t\ty = 1\n\n  # a\n\t    z = (2,\n3)  # b\n", True),
    ("indentation_error_crlf", "if x:\r\n    y = 1  # a\r\n  z = 2  # b\r\n", True),
    ("eof_in_statement", "x = (1,  # a\n  2,  # b\n", True),
    ("eof_after_continuation", "x = (1,\n2) + \\\n", True),
    ("lone_cr", "x = 1\r# c\ny = (\r2)  # d\n", False),
    ("comment_line_with_lone_cr", "# a\rb = 1\n", False),
    ("unterminated_single", "x = 'abc # c\ny = 1  # d\n", False),
    ("unterminated_triple", 'x = 1  # a\ny = """abc # c\n', False),
    ("four_quotes_unterminated", "x = 1  # a\ny = ''''  # c\n", False),
    ("unterminated_continued_single", "x = 'abc\\\ndef # c\ny = 1\n", False),
    ("escaped_backslash_at_line_end", "x = 'ab\\\\\n# c'\n", False),
    ("stray_backslash", "x = 1 \\ # c\ny = (1,\n2)\n", False),
    ("unmatched_close", "x = 1)\n# c\ny = (1,\n2)\n", False),
    ("statement_starting_with_continuation", "\\\nx = (1,\n2)  # c\n", False),
]


@pytest.mark.parametrize(("text", "answered"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_lexer_agrees_with_the_tokenizer_or_declines(text, answered):
    scanned = scanned_comments(text)
    assert (scanned is not None) == (answered and LEXES_LIKE_TOKENIZE)  # 3.12's tokenize lexes f-strings
    if scanned is not None:
        assert (scanned[0], scanned[1]) == reference(text)
    assert through_comments(text) == reference(text)


def test_cases_hold_comments_and_spans():
    """Against cases whose answers are all empty, which any two lexers agree on."""
    answers = [reference(text) for _, text, _ in CASES]
    assert sum(1 for found, _ in answers if found) >= 30
    assert sum(1 for _, spans in answers if spans) >= 20


def test_known_answers_written_by_hand():
    """Cases whose answer is read off the text, not from either implementation."""
    assert through_comments('x = "# no"  # yes\n') == ([(1, 12, "# yes")], {})
    assert through_comments("f(a,  # one\n  b)\n") == ([(1, 6, "# one")], {1: (1, 2), 2: (1, 2)})
    assert through_comments('d = """\n# no\n"""  # yes\n') == ([(3, 5, "# yes")], {n: (1, 3) for n in (1, 2, 3)})
    assert through_comments("x = 1 + \\\n# c\ny = 2\n") == ([(2, 0, "# c")], {1: (1, 2), 2: (1, 2)})
    # the tokenizer stops at the dedent to column 2: the comment on that line is not found
    assert through_comments("if x:\n    y = 1  # a\n  z = 2  # b\n") == ([(2, 11, "# a")], {})


def test_directives_are_found_through_the_lexer():
    text = 'class A:  # noqa: EGL001\n    x = "# noqa"\n    y = (1,\n         2)  # eaglelint: ignore[EGL002]\n'
    scan = scan_directives(text.encode(), text)
    assert [(d.line, d.column, d.codes) for d in scan.directives] == [(1, 11, ("EGL001",)), (4, 14, ("EGL002",))]
    assert scan.spans == ((3, 4),)


# Pieces a snippet is drawn from: everything the lexer tells apart, and what sits next to it.
PIECES = [
    "x", "ab", "r", "rb", "f", "1", " ", "  ", "\t", "\f", " = ", ",", ":", ".", "\\", "\\\n", "\\\r\n",
    "#", "# c", "# 'q' \"", "'", '"', "'''", '"""', "''", '""', "'a'", '"#"', "'\\''", '"\\"', "'''#'''",
    "(", ")", "[", "]", "{", "}", "\n", "\r\n", "\r", "\n    ", "\n\t", "\n  ", "\n\f", "if x:\n    ",
    "\n\n", "@d\n", "$", "\v",
]


# a lone CR, a quote or backslash that starts no string or continuation (`"\"` is unterminated),
# a closing bracket that may close nothing
DECLINING = ("\r", "\\", "'", '"', "'''", '"""', ")", "]", "}", '"\\"')



@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_drawn_snippets_agree_with_the_tokenizer(text):
    scanned = scanned_comments(text)
    if scanned is not None:
        assert (scanned[0], scanned[1]) == reference(text)
    assert through_comments(text) == reference(text)


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="#'\"\\()[]{} \t\f\v\r\n\x00ax1:=é", max_size=60))
def test_drawn_characters_agree_with_the_tokenizer(text):
    """Any mix of the characters the lexer looks at, and some the tokenizer rejects."""
    scanned = scanned_comments(text)
    if scanned is not None:
        assert (scanned[0], scanned[1]) == reference(text)


def test_the_lexer_answers_most_snippets_without_the_declining_pieces():
    """The drawn test above would pass with a lexer that always declines; this one would not."""
    rng = random.Random(7)
    pieces = [p for p in PIECES if p not in DECLINING]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randrange(40))) for _ in range(300)]
    answered = [t for t in texts if scanned_comments(t) is not None]
    assert len(answered) >= 200 if LEXES_LIKE_TOKENIZE else not answered
    assert all((lambda s: (s[0], s[1]))(scanned_comments(t)) == reference(t) for t in answered)


def release_files(tree: str):
    if tree == "vllm":
        root = vllm_root()
        return sorted((root / "vllm").rglob("*.py"))
    return sorted((release_root(tree) / "sglang").rglob("*.py"))


@pytest.mark.release
@pytest.mark.slow
@pytest.mark.parametrize("tree", ["0.5.9", "0.5.23", "vllm"])
def test_every_file_of_a_release_gets_the_tokenizers_answer_from_the_lexer(tree):
    files = release_files(tree)
    assert len(files) > 500
    declined, differ = [], []
    for path in files:
        raw = path.read_bytes()
        text = decode_source(path, raw).text
        scanned = scanned_comments(text)
        if scanned is None:
            declined.append(path)
        elif (scanned[0], scanned[1]) != reference(text):
            differ.append(path)
    assert differ == []
    # the lexer itself answers for nearly every file
    assert len(declined) <= len(files) // 100 if LEXES_LIKE_TOKENIZE else len(declined) == len(files)
