"""Lazily parsed summaries (analysis/python/summary.py `summarize_lazily`): each top-level class is
parsed alone when asked for, and the result is the summary a whole parse gives.

The reference is always `summarize` of the whole file's `ast.parse` (Python's own reading),
compared field by field and in class order, never a stored expectation.
"""

import ast
import random
import re
import textwrap
from pathlib import Path

import pytest
from fetch_sglang import models_dir, vllm_models_dir

from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.summary import LazyClasses, LazyFunctions, ModuleSummary, summarize, summarize_lazily
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.analysis.store.cache_codec import decode, encode

FIELDS = ("names", "functions", "entry_classes", "entry_refs", "star_imports", "all_names", "late_members")


def whole(text: str, path: str = "m.py") -> ModuleSummary:
    return summarize(ast.parse(text), text, path)


def assert_same(lazy: ModuleSummary, full: ModuleSummary) -> None:
    for name in FIELDS:
        assert getattr(lazy, name) == getattr(full, name), name
    assert list(lazy.classes.items()) == list(full.classes.items())  # the values, and their order


def lazily(text: str, path: str = "m.py") -> ModuleSummary:
    mod = summarize_lazily(text, path)
    assert mod is not None and isinstance(mod.classes, LazyClasses)
    return mod


@pytest.mark.parametrize("tree", ["sglang-0.5.23", "vllm-0.33.0"])
def test_every_file_of_a_release_summarises_lazily_as_a_whole_parse_does(tree):
    """Every module of the tree, half its classes asked for in a random order first (nested
    classes then come back in place), then all of them: the whole parse's summary."""
    root = models_dir("0.5.23") if tree.startswith("sglang") else vllm_models_dir()
    compared = 0
    for n, path in enumerate(sorted(root.rglob("*.py"))):
        text = path.read_text(encoding="utf-8")
        lazy = summarize_lazily(text, str(path))
        if lazy is None:
            continue
        names = list(lazy.classes.pending)
        random.Random(n).shuffle(names)
        for name in names[: len(names) // 2]:
            assert lazy.classes.get(name) is not None
        functions = list(lazy.functions.pending) if isinstance(lazy.functions, LazyFunctions) else []
        random.Random(-n).shuffle(functions)
        for name in functions[: len(functions) // 2]:
            assert lazy.functions.get(name) is not None
        assert_same(lazy, whole(text, str(path)))
        compared += 1
    assert compared > 200  # most modules have a class to leave out


def test_asking_for_one_class_parses_that_class_alone():
    text = (models_dir("0.5.23") / "deepseek_v2.py").read_text(encoding="utf-8")
    lazy = lazily(text)
    before = set(lazy.classes.pending)
    assert {"DeepseekV2ForCausalLM", "DeepseekV2AttentionMLA", "DeepseekV2MoE"} <= before
    info = lazy.classes.get("DeepseekV2ForCausalLM")
    assert info is not None and info == whole(text).classes["DeepseekV2ForCausalLM"]
    assert set(lazy.classes.pending) == before - {"DeepseekV2ForCausalLM"}


def test_asking_for_one_function_parses_that_function_alone():
    """A module's top-level functions wait too: resolving a factory parses that function only."""
    text = (models_dir("0.5.23") / "deepseek_v2.py").read_text(encoding="utf-8")
    lazy = lazily(text)
    assert isinstance(lazy.functions, LazyFunctions)
    before = set(lazy.functions.pending)
    assert len(before) > 3 and all(lazy.functions.done[n] is None for n in before)
    name = sorted(before)[0]
    info = lazy.functions.get(name)
    assert info is not None and info == whole(text).functions[name]
    assert set(lazy.functions.pending) == before - {name}


FUNCTION_SHAPES = {
    "a def line inside a module string": '''
        HELP = """Usage:
        def example(x):
            return x
        """
        def real(x):
            return HELP
        ''',
    "a decorated function, an async one, and a signature over lines": '''
        import functools

        @functools.cache
        def cached(x):
            return Cached(x)

        async def waits(x):
            return Waited(x)

        def spans(
            a,
            b=Default,
        ) -> Out:
            return Made(a, b)
        ''',
    "the same name defined twice, once under an if": '''
        import sys

        if sys.version_info >= (3, 12):
            def pick():
                return New
        def pick():
            return Old
        ''',
    "a function with no class in the module": '''
        def build(config):
            return Model(config)
        ''',
}


@pytest.mark.parametrize("shape", sorted(FUNCTION_SHAPES))
def test_function_shapes_summarise_as_a_whole_parse_does(shape):
    text = textwrap.dedent(FUNCTION_SHAPES[shape]).lstrip()
    full = whole(text)
    lazy = summarize_lazily(text, "m.py")
    if lazy is None:
        return  # parsed whole: nothing lazy to compare
    for name in reversed(list(full.functions)):
        lazy.functions.get(name)
    assert_same(lazy, full)


def test_a_def_line_inside_a_string_is_not_taken_for_a_function():
    text = textwrap.dedent(FUNCTION_SHAPES["a def line inside a module string"]).lstrip()
    lazy = summarize_lazily(text, "m.py")
    assert lazy is None or "example" not in lazy.functions


def test_a_syntax_error_in_a_function_is_reported_when_the_function_is_asked_for():
    text = "def ok():\n    return 1\ndef bad(x:\n    return 2\n"
    lazy = lazily_functions(text)
    heard = []
    lazy.classes.bind(lazy, lambda: text, on_error=heard.append)
    assert lazy.functions.get("ok") is not None and heard == []
    assert lazy.functions.get("bad") is None
    assert heard and heard[0].startswith("syntax error: line 3")


def lazily_functions(text: str) -> ModuleSummary:
    mod = summarize_lazily(text, "m.py")
    assert mod is not None and isinstance(mod.functions, LazyFunctions) and mod.functions.pending
    return mod


def test_pending_functions_survive_the_cache_and_parse_from_the_text():
    text = "def build(config):\n    return Model(config)\n\ndef other():\n    return 2\n"
    lazy = lazily_functions(text)
    lazy.functions.get("other")
    back = decode(encode(lazy))
    assert isinstance(back.functions, LazyFunctions) and back.functions.pending == {"build": (1, 3)}
    back.classes.bind(back, lambda: text)
    assert_same(back, whole(text))


SHAPES = {
    "a class line inside a module string": '''
        """Usage:
        class Example(Base):
            pass
        """
        class Real:
            def f(self):
                return 1
        ''',
    "docstring text at column 0 inside a class": '''
        class A:
            def f(self):
                """Returns
        x = 1
        """
                self.model = B()
        class B:
            pass
        ''',
    "a backslash continuation onto column 0": '''
        class A:
            x = 1 + \\
        2
        class B:
            y = 2
        ''',
    "a decorated class": '''
        import dataclasses
        @dataclasses.dataclass
        class A:
            x: int = 1
        class B(A):
            pass
        ''',
    "a class defined twice": '''
        class A:
            x = 1
        class B:
            pass
        class A:
            y = 2
        ''',
    "a class also defined under an if": '''
        import sys
        if sys.version_info > (3,):
            class A:
                x = 1
        class A:
            y = 2
        class C:
            pass
        ''',
    "a class redefined under an if after it": '''
        import sys
        class A:
            class X:
                pass
        if sys.version_info > (3,):
            class A:
                y = 2
        class C:
            pass
        ''',
    "bases over several lines, closed at column 0": '''
        class Mixin:
            pass
        class A(
            Mixin,
        ):
            def f(self):
                self.model = Mixin()
        class B:
            pass
        ''',
    "nested classes, asked for before their outer": '''
        class Outer:
            class Inner:
                class Deep:
                    pass
            def f(self):
                pass
        class After:
            pass
        ''',
    "a call closed at column 0 after a class": '''
        class A:
            pass
        REGISTRY = dict(
            a=A,
        )
        class B(A):
            pass
        EntryClass = [A, B]
        ''',
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shapes_that_confuse_a_line_splitter_summarise_as_a_whole_parse_does(shape):
    text = textwrap.dedent(SHAPES[shape]).lstrip()
    full = whole(text)
    lazy = summarize_lazily(text, "m.py")
    if lazy is None:
        return  # parsed whole: nothing lazy to compare
    for name in ("Outer.Inner.Deep", "Outer.Inner", *reversed(list(full.classes))):
        lazy.classes.get(name)
    assert_same(lazy, full)


def test_a_class_line_inside_a_string_is_not_taken_for_a_class():
    text = textwrap.dedent(SHAPES["a class line inside a module string"]).lstrip()
    lazy = summarize_lazily(text, "m.py")
    assert lazy is None or "Example" not in lazy.classes


def test_a_syntax_error_in_a_class_is_reported_when_the_class_is_asked_for():
    text = "class A:\n    x = 1\nclass B:\n    def f(self:\n        pass\n"
    lazy = lazily(text)
    heard = []
    lazy.classes.bind(lazy, lambda: text, on_error=heard.append)
    assert lazy.classes.get("A") is not None and heard == []  # A alone parses: nothing to say yet
    assert lazy.classes.get("B") is None
    assert heard and heard[0].startswith("syntax error: line 4")


def test_a_partly_parsed_summary_survives_the_cache_and_parses_the_rest_from_the_text():
    text = (models_dir("0.5.23") / "qwen3_vl.py").read_text(encoding="utf-8")
    lazy = lazily(text)
    lazy.classes.get("Qwen3VLForConditionalGeneration")
    back = decode(encode(lazy))
    assert isinstance(back.classes, LazyClasses)
    assert back.classes.pending == lazy.classes.pending
    back.classes.bind(back, lambda: text)
    assert_same(back, whole(text))


def test_a_run_keeps_the_classes_it_parsed_and_the_next_run_reads_them(tmp_path):
    """The first run's cache entry for deepseek_v2.py holds the classes that run parsed; a
    second project reading it parses none of them again (the parser is patched to refuse)."""
    path = models_dir("0.5.23") / "deepseek_v2.py"
    first = Project(SummaryCache(tmp_path))
    mod = first.summary(path)
    asked = mod.classes["DeepseekV3ForCausalLM"]
    first.save()
    second = Project(SummaryCache(tmp_path))
    again = second.summary(path)
    assert isinstance(again.classes, LazyClasses) and "DeepseekV3ForCausalLM" in again.classes.done
    assert again.classes.done["DeepseekV3ForCausalLM"] == asked
    assert second.parsed == []  # the summary came from the cache


def test_the_summary_cache_entry_of_a_lazy_module_is_written_once_the_run_is_done(tmp_path):
    cache = SummaryCache(tmp_path)
    project = Project(cache)
    project.summary(models_dir("0.5.23") / "deepseek_v2.py")
    key = project.digests[Path(models_dir("0.5.23") / "deepseek_v2.py").resolve()]
    assert not cache.has(key)  # a put per parsed class would encode the module again each time
    project.save()
    assert cache.has(key)


WRAPPER = '''
from torch import nn

from sglang.srt.models.lm import LMForCausalLM


class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.language_model = LMForCausalLM(config)


EntryClass = [Wrapper]
'''

LM_HEAD = '''
from torch import nn


class Unrelated(nn.Module):
    pass


'''
LM_BODY = '''class LMForCausalLM(nn.Module):
    def __init__(self, config):
        self.lm_head = nn.Linear(1, 1)
        self.logits_processor = None
        {line}

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.model.layers_to_capture = layer_ids

    def get_embed_and_head(self):
        return self.model.embed_tokens.weight, self.lm_head.weight
'''


@pytest.mark.parametrize("line", ["x = (1,", "x = self" + ".a" * 30000],
                         ids=["syntax error", "nested too deeply to parse"])
def test_a_class_found_broken_when_asked_for_gives_what_a_whole_parse_gives(tmp_path, monkeypatch, line):
    """The wrapped class's file parses without it, and not with it: the findings are those of a
    run that read every file whole (EGL010 naming the reason, EGL999 for the file)."""
    from eaglelint.analysis.python import summary as summary_module
    from eaglelint.checks.run import CheckOptions, check_files
    from eaglelint.packs import select_interfaces

    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (tmp_path / "sglang" / "__init__.py").write_text("")
    (models / "wrapper.py").write_text(WRAPPER)
    (models / "lm.py").write_text(LM_HEAD + LM_BODY.format(line=line))
    options = CheckOptions(tuple(select_interfaces(None)))

    def findings():
        found = check_files(sorted(models.glob("*.py")), options, Project()).findings
        return sorted((Path(f.path).name, f.code, f.message) for f in found)

    lazy = findings()
    assert ("lm.py", "EGL999") in {(name, code) for name, code, _ in lazy}
    monkeypatch.setattr(summary_module, "summarize_lazily", lambda text, path: None)
    assert lazy == findings()


def test_a_worker_sends_a_partly_parsed_summary_without_its_text():
    """What `--jobs` workers return: the classes asked for parsed, the rest pending; the
    parent binds its own copy of the text and parses the rest as if it had read the file."""
    import pickle

    from eaglelint.analysis.python.project import summarize_for_cache
    from eaglelint.analysis.python.summary import mentions

    path = models_dir("0.5.23") / "deepseek_v2.py"
    raw = path.read_bytes()
    asked, _ = mentions(ModuleSummary(str(path)), "DeepseekV3ForCausalLM")
    sent, entry = summarize_for_cache(path, raw, False, True, asked)
    assert entry is None  # kept by the parent once its run is done
    back = pickle.loads(pickle.dumps(sent))
    assert "DeepseekV3ForCausalLM" in back.classes.done and back.classes.pending
    text = raw.decode()
    back.classes.bind(back, lambda: text)
    assert_same(back, whole(text, str(path)))


@pytest.mark.parametrize("attrs,builders", [(("language_model", "llm"), {"init_llm"}),
                                             (("model", "<setattr:12>"), set())],
                         ids=["names and a builder", "a name set at run time"])
def test_a_wrapper_pattern_with_its_needles_finds_the_classes_it_finds_alone(attrs, builders):
    """Discovery's pattern (checks/run.py `may_hold`) searched where its needles occur finds, in
    every module of a release, exactly the classes the pattern finds searched everywhere."""
    from eaglelint.checks.run import hold_needles, may_hold

    pattern, needles = may_hold(attrs, builders), hold_needles(attrs, builders)
    found = 0
    for path in sorted(models_dir("0.5.23").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        plain, fast = summarize_lazily(text, str(path)), summarize_lazily(text, str(path))
        if plain is None:
            continue
        for mod in (plain, fast):
            mod.classes.bind(mod, lambda text=text: text)
        expected = [c.name for c in plain.classes_matching(pattern)]
        assert [c.name for c in fast.classes_matching(pattern, needles=needles)] == expected, path.name
        found += len(expected)
    assert found > 50


def test_subclasses_of_the_classes_a_pattern_finds_are_parsed_by_the_names_in_their_headers():
    """`classes_matching(pattern, subclasses=True)`: the classes whose text the pattern finds,
    and, round after round, those whose header names one of the classes parsed so far: by a
    whole word (`Base`, not `BaseMixin` or `MyBase`), by a nested class's dotted name, or by a
    name that is not one word (a middle dot may continue an identifier; such a class is parsed
    with the module here, being decorated)."""
    text = textwrap.dedent('''\
        import torch


        class Base:
            marker = 1


        class Child(Base):
            pass


        class Grandchild(Child, torch.nn.Module):
            pass


        class Outer:
            class Inner:
                pass


        class FromInner(Outer.Inner):
            pass


        class NotASubclass(BaseMixin, MyBase):
            pass


        class Unrelated:
            pass
        ''')
    mod = lazily(text)
    parsed = [info.name for info in mod.classes_matching(re.compile(r"marker"), subclasses=True)]
    assert parsed == ["Base", "Child", "Grandchild"]
    mod = lazily(text)
    parsed = [info.name for info in mod.classes_matching(re.compile(r"class Inner"), subclasses=True)]
    assert parsed == ["Outer", "Outer.Inner", "FromInner"]
    mod = lazily("@decorated\nclass Spe\u00b7cial:\n    pass\n\n\nclass FromSpecial(Spe\u00b7cial):\n    pass\n\n\n"
                 "class Unrelated:\n    pass\n")
    assert "Spe\u00b7cial" in mod.classes.done  # decorated: parsed with the module
    parsed = [info.name for info in mod.classes_matching(re.compile(r"no such text"), subclasses=True)]
    assert parsed == ["Spe\u00b7cial", "FromSpecial"]
