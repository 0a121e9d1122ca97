"""The statement and node walks the summaries and the capture chain read: `nodes_of` gives
`ast.walk`'s nodes in `ast.walk`'s order, and `walk_local` gives a scope's statements
(each compound statement, then its blocks, the last block first) without entering nested
functions or classes, however deep the blocks nest."""

import ast

from fetch_sglang import release_root

from eaglelint.analysis.syntax.scope import nodes_of, walk_local


def test_nodes_of_is_ast_walk_on_every_model_file_of_a_release():
    files = sorted((release_root("0.5.23") / "sglang" / "srt" / "models").rglob("*.py"))
    assert len(files) > 250
    for path in files:
        tree = ast.parse(path.read_bytes())
        assert nodes_of(tree) == list(ast.walk(tree)), path
        for node in tree.body:
            assert nodes_of(node) == list(ast.walk(node)), path


def _labels(stmts):
    return [s.targets[0].id if isinstance(s, ast.Assign) else type(s).__name__ for s in stmts]


def test_walk_local_reads_blocks_the_last_first_and_skips_nested_scopes():
    source = (
        "try:\n    a = 1\nexcept E:\n    b = 2\nexcept F:\n    c = 3\nelse:\n    d = 4\nfinally:\n    e = 5\n"
        "if x:\n    f = 1\nelse:\n    g = 2\n"
        "match y:\n    case 1:\n        h = 1\n    case _:\n        i = 2\n"
        "def fn():\n    hidden = 1\n"
        "class C:\n    hidden = 2\n"
        "with z:\n    j = 1\n"
        "k = 1\n"
    )
    # a Try's blocks are body, orelse, finalbody, then its handlers: read from the last
    assert _labels(walk_local(ast.parse(source).body)) == [
        "Try", "c", "b", "e", "d", "a",
        "If", "g", "f",
        "Match", "i", "h",
        "FunctionDef", "ClassDef",
        "With", "j",
        "k",
    ]


def test_walk_local_takes_blocks_nested_as_deep_as_python_allows():
    depth = 99  # the tokenizer refuses a 100th level of indentation
    source = "".join("    " * i + "if x:\n" for i in range(depth)) + "    " * depth + "y = 1\n"
    stmts = walk_local(ast.parse(source).body)
    assert len(stmts) == depth + 1 and _labels(stmts)[-1] == "y"
