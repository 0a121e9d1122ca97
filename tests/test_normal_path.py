"""The normal-path evaluator both capture chains share: its truth table, the reachability
of returns, the engine tables read from rules/, and that the chains keep no copy of it."""

import ast
import re
import textwrap

import pytest
from conftest import REPO

from eaglelint.packs import TRUTH_KINDS, EngineTruth, RulesError, load_normal_truths, load_toml, rules_dir

ANALYSIS = REPO / "eaglelint" / "analysis"
CHAINS = ("sglang/capture_chain.py", "vllm/vllm_chain.py")
# engine truths made up for the table below, so it tests the evaluator and not the data
TRUTHS = (EngineTruth("call_attr", "is_quiet", False), EngineTruth("attr", "on_top", True),
          EngineTruth("isinstance_class_contains", "Relay", False))


def evaluator():
    from eaglelint.analysis.python.normal_path import NormalPath
    return NormalPath(TRUTHS, nonempty={"aux"}, pairs={"out"})


def expr(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


# (test, its value on the normal path: True, False or None for unknown)
TABLE = [
    # the engine's truths, by kind
    ("batch.mode.is_quiet()", False),
    ("batch.mode.is_quiet", None),  # an attribute test, not the call the table names
    ("is_quiet()", None),  # a bare call, not a method
    ("group.on_top", True),
    ("group.on_top()", None),
    ("isinstance(h, RelayTensors)", False),
    ("isinstance(h, (torch.Tensor, mod.RelayTensors))", False),
    ("isinstance(h, torch.Tensor)", None),
    ("flag", None),
    ("self.flag", None),
    # not
    ("not group.on_top", False),
    ("not batch.mode.is_quiet()", True),
    ("not flag", None),
    # and / or: decided by any decisive operand, unknown when an unknown one could decide
    ("group.on_top and not batch.mode.is_quiet()", True),
    ("group.on_top and batch.mode.is_quiet()", False),
    ("flag and batch.mode.is_quiet()", False),
    ("flag and group.on_top", None),
    ("flag or group.on_top", True),
    ("batch.mode.is_quiet() or group.on_top", True),
    ("batch.mode.is_quiet() or not group.on_top", False),
    ("flag or batch.mode.is_quiet()", None),
    # a non-empty local: its truth and its length against constants
    ("aux", True),
    ("not aux", False),
    ("len(aux) == 0", False),
    ("len(aux) != 0", True),
    ("len(aux) > 0", True),
    ("len(aux) >= 1", True),
    ("len(aux) < 1", False),
    ("len(aux) == 1", None),
    ("len(aux) > 1", None),
    ("len(other) > 0", None),
    ("len(aux) > n", None),
    ("0 < len(aux) < 5", None),  # chained: not read
    # a local holding a 2-tuple
    ("isinstance(out, tuple)", True),
    ("isinstance(out, (list, tuple))", True),
    ("isinstance(out, torch.Tensor)", False),
    ("isinstance(other, tuple)", None),
    ("len(out) == 2", True),
    ("len(out) != 2", False),
    ("len(out) == 3", False),
    ("len(out) > 1", True),
    ("len(out) > 2", False),
    ("out", None),
]


@pytest.mark.parametrize(("source", "value"), TABLE, ids=[s for s, _ in TABLE])
def test_truth_table(source, value):
    assert evaluator().truth(expr(source)) is value


def test_without_facts_a_local_is_unknown():
    from eaglelint.analysis.python.normal_path import NormalPath
    plain = NormalPath(TRUTHS)
    assert [plain.truth(expr(s)) for s in ("aux", "len(aux) == 0", "isinstance(out, tuple)", "len(out) == 2")] \
        == [None] * 4


def returns_of(source: str):
    fn = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return [(ast.unparse(r.ret.value) if r.ret.value else None, [ast.unparse(t) for t in r.tests])
            for r in evaluator().returns(fn.body)]


def test_returns_under_decided_tests_follow_one_branch():
    assert returns_of("""
        def forward(self):
            if batch.mode.is_quiet():
                return empty
            if not group.on_top:
                return proxy
            return h, aux
    """) == [("(h, aux)", [])]


def test_returns_under_undecided_tests_are_reached_with_them():
    assert returns_of("""
        def forward(self):
            if self.gate:
                if flag:
                    return h, aux
                return h
            if flag or group.on_top:
                return h
            return never
    """) == [("(h, aux)", ["self.gate", "flag"]), ("h", ["self.gate"]), ("h", [])]


def test_a_block_that_always_leaves_ends_the_walk():
    assert returns_of("""
        def forward(self):
            with ctx():
                raise ValueError
            return h
    """) == []
    assert returns_of("""
        def forward(self):
            for layer in self.layers:
                return first
            try:
                return h, aux
            except ValueError:
                return h
            return never
    """) == [("first", []), ("(h, aux)", [])]  # a loop may not run; a handler is not the normal path
    assert returns_of("""
        def forward(self):
            if flag:
                return a
            else:
                raise ValueError
            return never
    """) == [("a", ["flag"])]


def test_values_of_a_conditional_return():
    n = evaluator()
    assert [(ast.unparse(v), [ast.unparse(t) for t in ts]) for v, ts in n.values(expr("(h, aux) if aux else h"))] \
        == [("(h, aux)", [])]
    assert [(ast.unparse(v), [ast.unparse(t) for t in ts]) for v, ts in n.values(expr("a if flag else b"))] \
        == [("a", ["flag"]), ("b", ["flag"])]
    assert n.values(None) == [(None, ())]


def test_engine_tables_are_read_from_rules():
    data = load_toml(rules_dir() / "normal_path.toml")
    assert set(data) == {"sglang", "vllm"}
    assert {(t.kind, t.name, t.value) for t in load_normal_truths("sglang")} == {
        ("call_attr", "is_idle", False), ("attr", "is_last_rank", True),
        ("isinstance_class_contains", "PPProxy", False)}
    assert {(t.kind, t.name, t.value) for t in load_normal_truths("vllm")} == {("attr", "is_last_rank", True)}
    assert all(t.why for engine in data for t in load_normal_truths(engine))
    assert {t.kind for engine in data for t in load_normal_truths(engine)} == set(TRUTH_KINDS)


@pytest.mark.parametrize("entry", [
    'kind = "attribute"\nname = "x"\nvalue = true',
    'kind = "attr"\nname = ""\nvalue = true',
    'kind = "attr"\nname = "x"\nvalue = "yes"',
    'kind = "attr"\nvalue = true',
])
def test_a_malformed_table_is_a_rules_error(tmp_path, monkeypatch, entry):
    (tmp_path / "normal_path.toml").write_text(f"[[sglang]]\n{entry}\n")
    monkeypatch.setattr("eaglelint.packs.rules_dir", lambda: tmp_path)
    load_normal_truths.cache_clear()
    try:
        with pytest.raises(RulesError):
            load_normal_truths("sglang")
    finally:
        load_normal_truths.cache_clear()


def test_an_unknown_engine_is_a_rules_error():
    with pytest.raises(RulesError):
        load_normal_truths("tgi")


def chain_tree(name: str) -> ast.Module:
    return ast.parse((ANALYSIS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", CHAINS)
def test_no_chain_keeps_its_own_normal_path(name):
    """The twins the chains had (`_normal_truth`, `_normal`, `_reachable`, `_normal_values`)
    are gone, and the engine's truths are named in no comparison there: they are data."""
    tree = chain_tree(name)
    defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert not {d for d in defined if re.search(r"normal_(truth|values)$|^_normal$|reachab", d)}
    named = {t.name for engine in ("sglang", "vllm") for t in load_normal_truths(engine)}
    compared = {c.value for n in ast.walk(tree) if isinstance(n, ast.Compare)
                for c in ast.walk(n) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    assert not {c for c in compared for name_ in named if name_ in c}
    assert any(isinstance(n, ast.ImportFrom) and (n.module or "").rpartition(".")[2] == "normal_path"
               for n in ast.walk(tree))


def test_the_evaluator_knows_no_engine():
    source = (ANALYSIS / "python" / "normal_path.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and re.search(r"chain", m)}
    assert not re.search(r"sglang|vllm", source, re.IGNORECASE)
    named = {t.name for engine in ("sglang", "vllm") for t in load_normal_truths(engine)}
    assert not {n for n in named if n in source}
