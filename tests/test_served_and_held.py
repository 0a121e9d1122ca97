"""What SGLang serves and what a served model holds, with Python as the oracle.

fixtures/held/heldfork/models is a fork's models folder in SGLang's patterns that runs as
plain Python: its registry.py collects `EntryClass` as SGLang's models/registry.py does,
and each model builds with a config. The served set eaglelint reads must be the set that
registry returns, and a served model must be reported for exactly the EAGLE-3 members it
lacks while something it holds (at any depth) has them: the members the engine would
call on it and find missing.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.capture.wrapper_attrs import DEFAULT_WRAPPER_ATTRS
from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.prefilter import WrapperAssignTest
from eaglelint.analysis.python.project import FoundBroken, Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.served import read_registry, served
from eaglelint.checks.delegation import OPTIONAL_CODE, SEVERITY_BY_CALLED_ON, UNRESOLVED
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

ROOT = FIXTURES / "held"
MODELS = ROOT / "heldfork" / "models"
CODES = {"set_eagle3_layers_to_capture": "EGL001", "get_embed_and_head": "EGL001", "set_embed_and_head": "EGL002"}
DELEGATION = {*SEVERITY_BY_CALLED_ON.values(), OPTIONAL_CODE}

# Run in a fresh interpreter: the registry's classes (name -> file, qualname), and for each
# served class, the members it lacks that some object it holds has, over every config that
# builds it (a registry-chosen language model: each architecture the registry has).
ORACLE = textwrap.dedent("""
    import functools, json, sys, types
    sys.path.insert(0, sys.argv[1])
    from heldfork.models.registry import import_model_classes
    MEMBERS = %r
    registry = import_model_classes("heldfork.models")

    def held(obj, depth=0):
        if depth > 3:
            return
        yield obj
        values = list(vars(obj).values())
        for name, value in vars(type(obj)).items():
            if isinstance(value, (property, functools.cached_property)):
                values.append(getattr(obj, name))
        for value in values:
            if hasattr(value, "__dict__") and not isinstance(value, (type, types.FunctionType)):
                yield from held(value, depth + 1)

    def chosen(cls):
        return "text_architecture" in cls.__init__.__code__.co_names

    def config(arch=None):
        return types.SimpleNamespace(text_architecture=arch, lm_attr="llm")

    # what a checkpoint's text architecture may name: a registered model with a head of its own
    text = [a for a, c in registry.items() if not chosen(c) and hasattr(c(config()), "lm_head")]
    gaps = {}
    for name, cls in registry.items():
        missing = set()
        for arch in text if chosen(cls) else [None]:
            obj = cls(config(arch))
            missing |= {m for m in MEMBERS if not hasattr(obj, m) and any(hasattr(h, m) for h in held(obj))}
        gaps[name] = sorted(missing)
    print(json.dumps({"served": {n: [sys.modules[c.__module__].__file__, c.__qualname__]
                                 for n, c in registry.items()}, "gaps": gaps}))
""") % (tuple(CODES),)


@pytest.fixture(scope="module")
def oracle() -> dict:
    out = subprocess.run([sys.executable, "-c", ORACLE, str(ROOT)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def findings():
    return check_files(discover([MODELS]).files, CheckOptions(tuple(select_interfaces(None)))).findings


def test_served_set_is_what_the_registry_collects(oracle):
    registry = served(Resolver(Project()), str(MODELS / "lm.py"))
    found = {name: [str(Path(cls.path).resolve()), cls.qualname] for name, cls in registry.by_name.items()}
    expected = {name: [str(Path(file).resolve()), qualname] for name, (file, qualname) in oracle["served"].items()}
    assert found == expected
    # the shapes the fixture spells: a list extended with +=, one class, a helper's list with an
    # alias and an append, a class re-exported from a subpackage, an imported EntryClass; and
    # the subpackage's own EntryClass, which the registry never reads
    assert {"PartLMForCausalLM", "SingleLMForCausalLM", "RealNameLMForCausalLM", "AppendedLMForCausalLM",
            "OmniForConditionalGeneration", "ImportedEntryLMForCausalLM"} <= set(found)
    assert "AliasLM" not in found and "HiddenLMForCausalLM" not in found


def test_served_set_read_from_bytes_equals_the_parsed_one():
    resolver = Resolver(Project())
    assert read_registry(resolver, MODELS).by_name == read_registry(Resolver(Project()), MODELS, False).by_name


def test_entry_class_tuple_is_not_served_as_the_registry_fails_on_it(tmp_path):
    package = tmp_path / "tuplefork" / "models"
    package.mkdir(parents=True)
    (package / "registry.py").write_bytes((MODELS / "registry.py").read_bytes())
    (package / "pair.py").write_text("class A:\n    pass\n\n\nclass B:\n    pass\n\n\nEntryClass = (A, B)\n")
    run = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from tuplefork.models."
                          "registry import import_model_classes as f; f('tuplefork.models')", str(tmp_path)],
                         capture_output=True, text=True)
    assert run.returncode != 0 and "AttributeError" in run.stderr  # a tuple has no __name__
    registry = served(Resolver(Project()), str(package / "pair.py"))
    assert registry.by_name == {}
    assert any("tuple" in why for why in registry.unread)


def test_each_served_model_is_reported_for_the_members_it_lacks(oracle, findings):
    by_class: dict[str, set[tuple[str, str]]] = {}
    for f in findings:
        if f.code in DELEGATION:
            by_class.setdefault(f.class_name, set()).add((f.code, f.method))
    dynamic = "DynamicSetattrWrapper"
    for name, missing in oracle["gaps"].items():
        if name != dynamic:
            assert by_class.get(name, set()) == {(CODES[m], m) for m in missing}, name
    # every shape of holding is among them, each with something missing
    assert all(oracle["gaps"][n] for n in ("AddModuleWrapper", "RegisterModuleWrapper", "SetattrWrapper",
                                           "ObjectSetattrWrapper", "ModuleSetattrWrapper", "PropertyWrapper",
                                           "FactoryWrapper", "CachedPropertyWrapper", "ChosenWrapper",
                                           "OmniForConditionalGeneration", "PatchedHolder", "LaterHolder"))


def test_a_name_set_at_run_time_is_undecidable_never_silent(oracle, findings):
    assert oracle["gaps"]["DynamicSetattrWrapper"]  # Python finds the members missing
    mine = [f for f in findings if f.class_name == "DynamicSetattrWrapper"]
    assert [f.code for f in mine] == [UNRESOLVED] and mine[0].fix is None


def test_chain_names_the_path_to_the_member(findings):
    omni = {f.method: f for f in findings if f.class_name == "OmniForConditionalGeneration"}
    assert omni["get_embed_and_head"].wrapper_attribute == "thinker"  # the thinker delegates it
    assert omni["set_eagle3_layers_to_capture"].wrapper_attribute == "thinker.language_model"
    assert omni["set_eagle3_layers_to_capture"].entry_class  # served through omni.py's re-export


def test_registry_chosen_model_is_judged_over_the_registered_text_models(findings):
    chosen = {f.method: f for f in findings if f.class_name == "ChosenWrapper"}
    # 8 registered text models in the fixture; PartLM and AppendedLM lack the embed members, which
    # PatchedLM (a PartLM) gets from its class decorator
    assert "6 of the 8 classes" in chosen["get_embed_and_head"].message
    assert not chosen["get_embed_and_head"].intent.every_candidate
    assert chosen["set_eagle3_layers_to_capture"].intent.every_candidate


def test_shapes_pass_the_prefilters_when_a_file_is_checked_alone(findings):
    """A lazily parsed file: a class is read only if its text passes discovery's patterns."""
    alone = check_files([MODELS / "holders.py"], CheckOptions(tuple(select_interfaces(None)))).findings
    whole = [f for f in findings if Path(f.path).name == "holders.py"]
    assert {(f.class_name, f.code, f.method) for f in alone} == {(f.class_name, f.code, f.method) for f in whole}


def test_registry_is_read_once_per_project_and_again_once_a_registered_file_turns_out_broken(tmp_path):
    """Every resolver of a run shares the registry it read; a module whose class body turns out
    not to parse (found lazily, after the registry was read) is then unregistered, as the
    registry's import of it would fail."""
    (tmp_path / "registry.py").write_text("")
    (tmp_path / "a.py").write_text("class A:\n    pass\n\n\nEntryClass = [A]\n")
    # `+=`: the bytes do not settle it, the module is summarised; its skeleton parses, B's body not
    (tmp_path / "b.py").write_text("class B:\n    def f(self):\n        return (\n\n\nEntryClass = [B]\n"
                                   "EntryClass += []\n")
    project = Project()
    first = served(Resolver(project), str(tmp_path / "a.py"))
    assert sorted(first.by_name) == ["A", "B"]
    assert served(Resolver(project), str(tmp_path / "a.py")) is first
    with pytest.raises(FoundBroken):
        Resolver(project).info(ClassEntity(str(tmp_path / "b.py"), "B"))
    assert sorted(served(Resolver(project), str(tmp_path / "a.py")).by_name) == ["A"]


@pytest.mark.parametrize(("line", "holds"), [
    (b'        self.add_module("language_model", LM(config))\n', True),
    (b"        setattr(self, 'language_model', LM(config))\n", True),
    (b"    def language_model(self):\n        return self.llm\n", True),  # a getter of that name
    (b'        self.add_module("vision", Tower(config))\n', False),
    (b"    def language_model_head(self):\n        return self.head\n", False),
    (b'        self.log("language_model")\n', False),
])
def test_a_file_holding_the_language_model_by_setter_or_getter_passes_the_bytes_test(line, holds):
    """The bytes test before any parse lets through every spelling the summary reads as holding
    `language_model` (summary.py SETTERS, getters), and not a file that only mentions it."""
    raw = b"class Wrapper(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n" + line
    assert WrapperAssignTest(DEFAULT_WRAPPER_ATTRS).search(raw) is holds


def test_a_registered_module_that_does_not_parse_is_no_candidate_of_a_registry_chosen_model(tmp_path):
    """The registry imports each module and skips one whose import fails (a syntax error at
    module level): its classes cannot be what the checkpoint chooses. The wrapper is judged
    over the text models that do import, without an internal error."""
    package = tmp_path / "fork" / "models"
    package.mkdir(parents=True)
    (package / "registry.py").write_bytes((MODELS / "registry.py").read_bytes())
    lm = ("from torch import nn\n\n\nclass {name}(nn.Module):\n    def __init__(self, config):\n"
          "        super().__init__()\n        self.lm_head = nn.Linear(1, 1)\n\n"
          "    def get_embed_and_head(self):\n        return self.embed, self.lm_head\n\n"
          "    def set_embed_and_head(self, embed, head):\n        pass\n\n"
          "{capture}\n\nEntryClass = [{name}]\n")
    setter = "    def set_eagle3_layers_to_capture(self, layer_ids=None):\n        pass\n"
    (package / "good.py").write_text(lm.format(name="GoodForCausalLM", capture=setter))
    broken = lm.format(name="BrokenForCausalLM", capture="").replace("from torch import nn\n",
                                                                      "from torch import nn\nx = (1,\n")
    (package / "broken.py").write_text(broken)
    (package / "wrapper.py").write_text(
        "from torch import nn\n\nfrom .registry import ModelRegistry\n\n\nclass ChosenLlava(nn.Module):\n"
        "    def __init__(self, config):\n        super().__init__()\n        self.language_model = "
        "ModelRegistry.resolve_model_cls(config.text_config.architectures)[0](config)\n\n\n"
        "EntryClass = [ChosenLlava]\n")
    with pytest.raises(SyntaxError):
        compile(broken, "broken.py", "exec")
    found = check_files(sorted(package.glob("*.py")), CheckOptions(tuple(select_interfaces(None)))).findings
    mine = {f.method: f for f in found if f.class_name == "ChosenLlava"}
    assert not [f for f in found if "internal error" in f.message]
    assert set(mine) == set(EAGLE3_MEMBERS)
    assert mine["set_eagle3_layers_to_capture"].intent.every_candidate  # GoodForCausalLM, the only one that imports
    assert registry_names(package) == ["ChosenLlava", "GoodForCausalLM"]


EAGLE3_MEMBERS = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")


def registry_names(package: Path) -> list[str]:
    """The registered names once every module has been read (the broken one then known)."""
    project = Project()
    resolver = Resolver(project)
    served(resolver, str(package / "good.py"))
    for path in sorted(package.glob("*.py")):
        resolver.module(str(path))
    return sorted(served(Resolver(project), str(package / "good.py")).by_name)
