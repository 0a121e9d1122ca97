"""Fixed code, executed: each delegation `eaglelint fix` writes reaches the held object
with the arguments it was given and returns its value, or raises the documented
AttributeError when the held object lacks the member. Plain Python, no torch."""

import importlib
import shutil
import sys

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix import plan as fixmod
from eaglelint.packs import select_interfaces

EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
CALLS = {
    "set_eagle3_layers_to_capture": [((), {}), (([1, 5, 9],), {}), ((), {"layer_ids": [2]})],
    "get_embed_and_head": [((), {})],
    "set_embed_and_head": [(("E", "H"), {}), ((), {"embed": "E", "head": "H"}), (("E", "H"), {"strict": True})],
}
CONFIGS = {"SingleWrapper": [None], "CheckpointWrapper": ["full", "capture-only", "bare"]}


@pytest.fixture
def fixed(tmp_path, monkeypatch):
    """The behaviour fixture after `fix --write` in the default style, imported."""
    work = tmp_path / "behaviour"
    shutil.copytree(FIXTURES / "behaviour", work)
    project = Project()
    findings = check_files(sorted(work.glob("*.py")), CheckOptions(tuple(select_interfaces(None))), project).findings
    plan = fixmod.plan_fixes(findings, project, roots=[work])
    assert not plan.left
    for file_fix in plan.files:
        fixmod.write_fix(file_fix)
    monkeypatch.syspath_prepend(str(work))
    for name in ("lm", "wrappers"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("wrappers"), importlib.import_module("lm")
    for name in ("lm", "wrappers"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize("wrapper_name", sorted(CONFIGS))
def test_each_fixed_member_reaches_the_held_object_with_the_same_arguments(fixed, wrapper_name):
    wrappers, _ = fixed
    cls = getattr(wrappers, wrapper_name)
    assert all(name in vars(cls) for name in EAGLE3)  # the fix wrote all three
    for config in CONFIGS[wrapper_name]:
        for method, calls in CALLS.items():
            for args, kwargs in calls:
                wrapper = cls(config)
                held = wrapper.language_model
                if not hasattr(type(held), method):
                    continue
                direct = type(held)(config)
                expected = getattr(direct, method)(*args, **kwargs)
                assert getattr(wrapper, method)(*args, **kwargs) == expected
                assert held.calls == direct.calls and len(held.calls) == 1


def test_member_the_held_class_lacks_raises_naming_wrapper_member_and_class(fixed):
    wrappers, _ = fixed
    for config, lacking in (("capture-only", EAGLE3[1:]), ("bare", EAGLE3)):
        for method in lacking:
            wrapper = wrappers.CheckpointWrapper(config)
            args, kwargs = CALLS[method][0]
            with pytest.raises(AttributeError) as raised:
                getattr(wrapper, method)(*args, **kwargs)
            held = type(wrapper.language_model).__name__
            assert "CheckpointWrapper" in str(raised.value) and method in str(raised.value)
            assert held in str(raised.value)
            assert wrapper.language_model.calls == []


def test_plain_delegation_still_raises_when_the_held_object_lacks_the_member(fixed):
    """SingleWrapper's candidates all have the hooks, so its delegations are plain calls:
    given a model without them anyway, the call fails loudly, never silently."""
    wrappers, lm = fixed
    wrapper = wrappers.SingleWrapper()
    wrapper.language_model = lm.BareForCausalLM()
    for method in EAGLE3:
        args, kwargs = CALLS[method][0]
        with pytest.raises(AttributeError):
            getattr(wrapper, method)(*args, **kwargs)
