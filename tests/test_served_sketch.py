"""A registered class's Sketch read without its module's summary (served.py
`_sketch_unsummarised`) must be the Sketch `_sketch` makes through a summary made at the
same moment: on every registered class (and its bases) of real releases, and on modules of
our own for each case where the text leaves a doubt and the summary must decide."""

import textwrap
from pathlib import Path

import pytest
from fetch_sglang import models_dir

from eaglelint.analysis import served as served_module
from eaglelint.analysis.project import Project
from eaglelint.analysis.resolve import ClassEntity, Resolver
from eaglelint.analysis.served import Sketch, _sketch_unsummarised, ancestors, served


def through_summary(path: Path, name: str) -> Sketch:
    """The Sketch `_sketch` makes in a fresh project, the module summarised first."""
    resolver = Resolver(Project())
    resolver.module(str(path))
    return served_module._sketch(resolver, ClassEntity(str(path), name))


def unsummarised(path: Path, name: str) -> Sketch | None:
    return _sketch_unsummarised(Resolver(Project()), ClassEntity(str(path), name))


@pytest.mark.release
@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_every_registered_class_and_base_sketches_alike_without_its_summary(version):
    models = models_dir(version)
    resolver = Resolver(Project())
    classes = {c for cls in served(resolver, str(models / "llama.py")).classes for c in ancestors(resolver, cls)}
    read = 0
    for cls in sorted(classes, key=lambda c: (c.path, c.qualname)):
        quick = unsummarised(Path(cls.path), cls.qualname)
        if quick is not None:
            read += 1
            assert quick == through_summary(Path(cls.path), cls.qualname), cls
    assert read >= 60  # most candidates are read so (0.5.23: 75 of some 270 in a check)


def write(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


LLAMA = """
    from torch import nn


    class LlamaForCausalLM(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.lm_head = nn.Linear(1, 1)


    EntryClass = [LlamaForCausalLM]
"""


# read without a summary: each equal to the sketch through one
SETTLED = {
    "base defined above in the module": ("""
        from torch import nn


        class FooModel(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.layers = nn.ModuleList()


        class FooForCausalLM(FooModel):
            def __init__(self, config):
                super().__init__(config)
                self.lm_head = nn.Linear(1, 1)


        class FooForReward(FooForCausalLM):
            pass


        EntryClass = [FooForCausalLM, FooForReward]
    """, "FooForCausalLM"),
    "base imported over several lines": ("""
        from .llama import (
            LlamaForCausalLM,
        )


        class FooForCausalLM(LlamaForCausalLM):
            pass


        EntryClass = [FooForCausalLM]
    """, "FooForCausalLM"),
    "module docstring running over column-0 lines": ('''
        """Foo model.

        Adapted from the Llama model of the same layout.
        """
        from torch import nn


        class FooForCausalLM(nn.Module):
            """The model with its head."""

            def forward(self, x):
                def inner():
                    return x
                return inner()


        EntryClass = [FooForCausalLM]
    ''', "FooForCausalLM"),
    "class named in another class's body": ("""
        from torch import nn


        class FooForCausalLM(nn.Module):
            lm_head = None


        class FooAdapter(nn.Module):
            def build(self, config):
                return FooForCausalLM(config)


        EntryClass = [FooForCausalLM]
    """, "FooForCausalLM"),
}


@pytest.mark.parametrize("case", sorted(SETTLED))
def test_the_text_settles_the_sketch(tmp_path, case):
    text, name = SETTLED[case]
    models = write(tmp_path, {"llama.py": LLAMA, "foo.py": text})
    quick = unsummarised(models / "foo.py", name)
    assert quick is not None
    assert quick == through_summary(models / "foo.py", name)


def test_a_base_of_the_same_module_is_that_class(tmp_path):
    models = write(tmp_path, {"foo.py": SETTLED["base defined above in the module"][0]})
    quick = unsummarised(models / "foo.py", "FooForCausalLM")
    assert quick is not None and quick.bases == (ClassEntity(str(models / "foo.py"), "FooModel"),)


def test_plain_module_and_in_tree_base_are_read_without_a_summary(tmp_path):
    models = write(tmp_path, {"llama.py": LLAMA, "mistral.py": """
        from .llama import LlamaForCausalLM


        class MistralForCausalLM(LlamaForCausalLM):
            tied = True

            def forward(self, x):
                return x


        EntryClass = MistralForCausalLM
    """})
    quick = unsummarised(models / "mistral.py", "MistralForCausalLM")
    assert quick is not None
    assert quick == through_summary(models / "mistral.py", "MistralForCausalLM")
    assert quick.bases == (ClassEntity(str(models / "llama.py"), "LlamaForCausalLM"),)
    assert quick.members == {"tied", "forward"}
    plain = unsummarised(models / "llama.py", "LlamaForCausalLM")
    assert plain is not None and plain.assigned == {"lm_head"} and plain.bases == ()


# each module: where the text alone cannot settle the Sketch, and what the summary then sees
DOUBTS = {
    "base rebound after its import": ("""
        from torch import nn

        from .llama import LlamaForCausalLM as nn


        class FooForCausalLM(nn):
            pass


        EntryClass = [FooForCausalLM]
    """, lambda s, models: s.bases == (ClassEntity(str(models / "llama.py"), "LlamaForCausalLM"),)),
    "member added after the body": ("""
        from torch import nn


        class FooForCausalLM(nn.Module):
            pass


        FooForCausalLM.lm_head = None
        EntryClass = [FooForCausalLM]
    """, lambda s, models: "lm_head" in s.members),
    "decorated class": ("""
        from torch import nn


        def with_head(cls):
            cls.get_embed_and_head = lambda self: None
            return cls


        @with_head
        class FooForCausalLM(nn.Module):
            pass


        EntryClass = [FooForCausalLM]
    """, lambda s, models: "get_embed_and_head" in s.members),
    "aliased base": ("""
        from .llama import LlamaForCausalLM

        Base = LlamaForCausalLM


        class FooForCausalLM(Base):
            pass


        EntryClass = [FooForCausalLM]
    """, lambda s, models: s.bases == (ClassEntity(str(models / "llama.py"), "LlamaForCausalLM"),)),
    "base bound in a block": ("""
        try:
            from .llama import LlamaForCausalLM as Base
        except ImportError:
            from torch.nn import Module as Base


        class FooForCausalLM(Base):
            pass


        EntryClass = [FooForCausalLM]
    """, lambda s, models: ClassEntity(str(models / "llama.py"), "LlamaForCausalLM") in s.bases),
    "class line inside a string": ('''
        from torch import nn

        NOTE = """
        class FooForCausalLM(nn.Module):
        """


        class FooForCausalLM(nn.Module):
            def forward(self, x):
                def inner():
                    return x
                return inner()


        EntryClass = [FooForCausalLM]
    ''', lambda s, models: s.members == {"forward"}),  # read whole: a method's inner function is no member
    "def line inside a string": ('''
        from torch import nn

        USAGE = """
        def helper(x):
            return x
        """


        class FooForCausalLM(nn.Module):
            def forward(self, x):
                def inner():
                    return x
                return inner()


        EntryClass = [FooForCausalLM]
    ''', lambda s, models: s.members == {"forward"}),
    "triple quote inside a one-line string": ("""
        from torch import nn

        MARK = '\"\"\"'


        class FooForCausalLM(nn.Module):
            def forward(self, x):
                return x


        EntryClass = [FooForCausalLM]
    """, lambda s, models: s.members == {"forward"}),
    "member set in a module-level block": ("""
        from torch import nn


        class FooForCausalLM(nn.Module):
            pass


        if nn:
            setattr(FooForCausalLM, "lm_head", None)
        EntryClass = [FooForCausalLM]
    """, lambda s, models: "lm_head" in s.members),
    "class defined again in a block": ("""
        from torch import nn


        class FooForCausalLM(nn.Module):
            pass


        if nn:
            class FooForCausalLM(nn.Module):
                lm_head = None


        EntryClass = [FooForCausalLM]
    """, lambda s, models: "lm_head" in s.members),  # the later definition, which the whole parse reads
}


@pytest.mark.parametrize("case", sorted(DOUBTS))
def test_the_summary_decides_where_the_text_leaves_a_doubt(tmp_path, case):
    text, seen = DOUBTS[case]
    models = write(tmp_path, {"llama.py": LLAMA, "foo.py": text})
    assert unsummarised(models / "foo.py", "FooForCausalLM") is None
    assert seen(through_summary(models / "foo.py", "FooForCausalLM"), models)


def test_a_module_summarised_already_is_asked_of_its_summary(tmp_path):
    models = write(tmp_path, {"llama.py": LLAMA})
    resolver = Resolver(Project())
    resolver.module(str(models / "llama.py"))
    assert _sketch_unsummarised(resolver, ClassEntity(str(models / "llama.py"), "LlamaForCausalLM")) is None


@pytest.mark.release
def test_text_models_are_the_same_read_either_way(monkeypatch):
    models = models_dir("0.5.23")
    quick = [(c.path, c.qualname) for c in served_module.text_models(Resolver(Project()), str(models / "llava.py"))]
    monkeypatch.setattr(served_module, "_sketch_unsummarised", lambda resolver, cls: None)
    slow = [(c.path, c.qualname) for c in served_module.text_models(Resolver(Project()), str(models / "llava.py"))]
    assert quick == slow and len(quick) > 50
