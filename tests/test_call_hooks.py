"""Engines plug into the core through call hooks (analysis/python/calls.py).

A third engine here is a toy one: `build_registered("Name")` builds the class of that name
from its module. Its hook alone, installed beside the shipped ones, makes the resolver
follow such a call; the core modules are not touched for it.
"""

import ast
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

from eaglelint.analysis import engine_hooks
from eaglelint.analysis.python.calls import HOOKS, CallReader
from eaglelint.analysis.python.choices import held_classes
from eaglelint.analysis.python.entities import ClassEntity, Entity, InstanceEntity
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import Resolver
from eaglelint.analysis.syntax.refs import Ref

TOY = textwrap.dedent("""
    class TextModel:
        pass

    class Wrapper:
        def __init__(self, config):
            self.language_model = build_registered("TextModel")
""")


class ToyRegistry:
    """`build_registered("Name")`: an instance of the class `Name` of the calling module."""

    names = ("build_registered",)

    def read(self, call: ast.Call, name: str, reader: CallReader) -> list[Ref] | None:
        if len(call.args) != 1:
            return None
        return [Ref("toy-registry", args=tuple(reader.refs(call.args[0], literal_strings=True)))]

    def evaluate(self, resolver: Resolver, ref: Ref, path: str, owner: ClassEntity | None,
                 depth: int) -> list[Entity] | None:
        if ref.kind != "toy-registry":
            return None
        return [InstanceEntity(ClassEntity(path, a.name)) for a in ref.args if a.kind == "str"]


@pytest.fixture
def toy_engine():
    HOOKS.install(lambda: (*engine_hooks(), ToyRegistry()))
    yield
    HOOKS.install(engine_hooks)


def wrapper_holds(tmp_path) -> tuple[list[str], list[str]]:
    (tmp_path / "toy.py").write_text(TOY)
    resolver = Resolver(Project())
    classes, reasons = held_classes(resolver, ClassEntity(str(tmp_path / "toy.py"), "Wrapper"), "language_model")
    return [c.qualname for c in classes], reasons


def test_a_third_engine_is_one_hook(tmp_path, toy_engine):
    assert wrapper_holds(tmp_path) == (["TextModel"], [])


def test_without_its_hook_the_call_is_unknown(tmp_path):
    classes, reasons = wrapper_holds(tmp_path)
    assert classes == [] and reasons == ["'build_registered' is not defined in toy.py"]


def test_the_engines_hooks_are_in_place_for_any_user_of_the_core_and_imported_when_first_needed():
    """Importing the core installs the engines' hooks (analysis/__init__.py), without an entry
    point's help, and without importing an engine's module until a call is read."""
    probe = textwrap.dedent("""
        import ast, sys
        from eaglelint.analysis.python.exprs import expression_refs
        engines = ("eaglelint.analysis.sglang.served", "eaglelint.analysis.vllm.vllm_registry")
        print([m in sys.modules for m in engines])
        call = ast.parse('ModelRegistry.resolve_model_cls("LlamaForCausalLM")', mode="eval").body
        print(expression_refs(call, None))
        print([m in sys.modules for m in engines])
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.splitlines() == [
        "[False, False]", "[Ref(kind='registry', name='LlamaForCausalLM', attr='', args=())]", "[True, True]"]
