"""Python as the oracle: check's verdict on generated wrapper/held-class pairs equals what
`hasattr` says once the generated modules are executed.

Hypothesis draws a language model class (with a base) and a wrapper class (with a base)
and places each EAGLE-3 member in one of them, or nowhere, in one of the shapes Python
builds a class from: a plain def, under a class-body `if`/`else`/`try`/`with`, under
`if TYPE_CHECKING:` (absent at run time), bound to a class attribute, bound per
instance, or forwarded by an allow-list `__getattr__`. The wrapper must be reported
for exactly the members the held model has and the wrapper does not.
"""

import sys
import tempfile
import types
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eaglelint.analysis.python.project import Project
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

MEMBERS = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
SHAPES = ("def", "if", "else", "try", "with", "type_checking", "attribute", "instance")
OPTIONS = CheckOptions(tuple(select_interfaces(None)))
HEAD = "import contextlib\nfrom typing import TYPE_CHECKING, Generic, TypeVar\n\nFLAG = True\nT = TypeVar('T')\n\n\n" \
       "def _impl(self, *args, **kwargs):\n    return None\n\n\n"


def member_lines(name: str, shape: str) -> tuple[list[str], list[str]]:
    """(class-body lines, __init__ lines) that give a class `name` in `shape`."""
    define = [f"def {name}(self, *args, **kwargs):", "    return None"]
    inner = ["    " + line for line in define]
    if shape == "def":
        return define, []
    if shape == "if":
        return ["if FLAG:", *inner], []
    if shape == "else":
        return ["if not FLAG:", "    pass", "else:", *inner], []
    if shape == "try":
        return ["try:", *inner, "except NameError:", "    pass"], []
    if shape == "with":
        return ["with contextlib.nullcontext():", *inner], []
    if shape == "type_checking":
        return ["if TYPE_CHECKING:", *inner], []
    if shape == "attribute":
        return [f"{name} = _impl"], []
    return [], [f"self.{name} = lambda *args, **kwargs: None"]


def class_text(name: str, bases: str, placed: dict[str, str], init: list[str], extra: list[str]) -> str:
    body, init_lines = [], list(init)
    for member, shape in placed.items():
        lines, per_instance = member_lines(member, shape)
        body += lines
        init_lines += per_instance
    if init_lines:
        body += ["def __init__(self, *args, **kwargs):", "    super().__init__()",
                 *["    " + line for line in init_lines]]
    body += extra
    return f"class {name}({bases}):\n" + "".join(f"    {line}\n" for line in body or ["pass"]) + "\n\n"


@st.composite
def pairs(draw) -> tuple[str, str]:
    where = st.sampled_from(("none", "lm", "lm_base", "wrapper", "wrapper_base", "getattr"))
    placed = {m: (draw(where), draw(st.sampled_from(SHAPES))) for m in MEMBERS}
    generic = draw(st.booleans())

    def at(place):
        return {m: shape for m, (p, shape) in placed.items() if p == place}

    lm = HEAD + class_text("LMBase", "", at("lm_base"), [], []) + class_text("LM", "LMBase", at("lm"), [], [])
    # the allow-list __getattr__ forwards its members to the model, which must have them to forward
    forwarded = sorted(at("getattr"))
    lm += class_text("ForwardedLM", "LM", {m: "def" for m in forwarded}, [], []) if forwarded else ""
    held = "ForwardedLM" if forwarded else "LM"
    getattr_lines = [
        "def __getattr__(self, name):",
        f"    if name in {tuple(forwarded)!r}:",
        "        return getattr(self.__dict__['language_model'], name)",
        "    raise AttributeError(name)",
    ] if forwarded else []
    wrapper = HEAD + f"from lm import {held}\n\n\n"
    wrapper += class_text("WBase", "Generic[T]" if generic else "", at("wrapper_base"), [], [])
    wrapper += class_text("Wrapper", "WBase[int]" if generic else "WBase", at("wrapper"),
                          [f"self.language_model = {held}()"], getattr_lines)
    return lm, wrapper


def python_says(root: Path, lm: str, wrapper: str) -> set[str]:
    """Members the held model has and the wrapper lacks, by executing both modules."""
    lm_mod = types.ModuleType("lm")
    exec(compile(lm, str(root / "lm.py"), "exec"), lm_mod.__dict__)  # our generated plain-Python module
    saved = sys.modules.get("lm")
    sys.modules["lm"] = lm_mod
    try:
        namespace: dict = {}
        exec(compile(wrapper, str(root / "wrapper.py"), "exec"), namespace)
    finally:
        if saved is None:
            sys.modules.pop("lm")
        else:
            sys.modules["lm"] = saved
    instance = namespace["Wrapper"]()
    held = instance.language_model
    return {m for m in MEMBERS if hasattr(held, m) and not hasattr(instance, m)}


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_check_reports_exactly_what_python_lacks(pair):
    lm, wrapper = pair
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "lm.py").write_text(lm)
        (root / "wrapper.py").write_text(wrapper)
        findings = check_files([root / "lm.py", root / "wrapper.py"], OPTIONS, Project()).findings
        expected = python_says(root, lm, wrapper)
    assert {f.code for f in findings} <= {"EGL001", "EGL002"}, [f.message for f in findings]
    assert {f.method for f in findings if f.class_name == "Wrapper"} == expected, (lm, wrapper)
    assert all(f.class_name == "Wrapper" for f in findings)
