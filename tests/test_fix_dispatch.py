"""The check that made a finding owns its fix: each fixable code's family names a file planner
(`FIX`), and the fix stage finds it there, comparing no rule code."""

import ast
import re

from conftest import REPO

from eaglelint.checks.registry import FAMILIES, fixer_of
from eaglelint.packs import load_codes


def test_every_fixable_code_has_its_familys_fix_and_no_other_code_has_one():
    for code, rule in load_codes().items():
        family = next((f for f in FAMILIES if code in f.CODES), None)
        if rule.fixable:
            assert family is not None and callable(fixer_of(code)) and fixer_of(code) is family.FIX, code
        else:
            assert fixer_of(code) is None, code


def test_the_fix_stage_compares_no_rule_code():
    """No `f.code == SOME_CODE` and no EGLnnn literal (docstrings aside) anywhere in eaglelint/fix/."""
    for path in sorted((REPO / "eaglelint" / "fix").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                code = any(isinstance(s, ast.Attribute) and s.attr == "code" for s in sides)
                fixed = any(isinstance(s, (ast.Constant, ast.Name)) for s in sides)  # "EGL030", MARKER_CODE
                assert not (code and fixed), f"{path.name}:{node.lineno} compares a code with a fixed one"
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert not re.search(r"\bEGL\d{3}\b", node.value), f"{path.name}:{node.lineno} names a code"
