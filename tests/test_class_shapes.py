"""Four shapes of served classes, judged against execution.

fixtures/class_shapes/sglang/srt/models holds models in SGLang's patterns: an owner whose
decoder sits under `self.language_model` (Gemma-4's layout), a served class three objects
deep (outer -> thinker -> language model) that forwards two members down and lacks the
third, classes of a subpackage served through a top-level `EntryClass` that grows with `+=`,
and classes whose base is chosen when their module runs (by an environment variable, by a
`hasattr` test). The package is imported on stand-ins (tests/sglang_standins.py) the way
SGLang's registry imports it, once for each way the module-level choices can go; what each
served instance has, and what it holds, is the truth:

- a member the instance lacks in every run, which a language model it holds (at any depth)
  has: a delegation gap (EGL001/EGL002/EGL003, by the member's pack entry);
- lacking in some runs only: undecided statically, EGL010;
- lacking, nothing it holds has it, and it owns a head and holds a decoder (layers, no
  head): an owner's gap (EGL040 or EGL041).

`check` must report exactly these on the served classes (a gap reported at a base names
the served subclass), and `support` must give each served class the status they imply.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest
import sglang_standins as standins
from conftest import FIXTURES
from test_check_fixtures import expected

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import Resolver
from eaglelint.analysis.sglang.served import served
from eaglelint.checks.delegation import UNRESOLVED, code_for
from eaglelint.checks.owner import CODE as OWNER_CODE
from eaglelint.checks.owner import NO_FIX_CODE as OWNER_NO_FIX_CODE
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces
from eaglelint.pipeline.support import FIXABLE, IMPLEMENTABLE, SUPPORTED, UNKNOWN, support_matrix

ROOT = FIXTURES / "class_shapes"
MODELS = ROOT / "sglang" / "srt" / "models"
PACKS = select_interfaces(None)
METHODS = {m.name: m for p in PACKS for m in p.methods if p.engine == "sglang"}
ENV = "SHAPES_PARTIAL_DELEGATION"  # conditional_base.py's choice by environment


@contextmanager
def choices(flip: bool) -> Iterator[None]:
    """The module-level choices of conditional_base.py one way (flip=False) or the other: its
    environment variable set, and the class its `hasattr` test asks about given the name."""
    saved = os.environ.pop(ENV, None)
    if flip:
        os.environ[ENV] = "1"
    try:
        with standins.installed(ROOT):
            if flip:
                lm = importlib.import_module("sglang.srt.models.shapes_lm")
                lm.ShapesTextModel.layers_to_capture = []
            yield
    finally:
        os.environ.pop(ENV, None)
        if saved is not None:
            os.environ[ENV] = saved


def registered() -> dict[str, type]:
    """What SGLang's registry builds: each top-level module of the package (no subpackage's),
    its EntryClass as it is once the module has run, keyed by the class's __name__."""
    out: dict[str, type] = {}
    for info in pkgutil.iter_modules([str(MODELS)]):
        if info.ispkg:
            continue
        module = importlib.import_module(f"sglang.srt.models.{info.name}")
        entry = getattr(module, "EntryClass", None)
        for cls in entry if isinstance(entry, list) else [entry] if entry is not None else []:
            out.setdefault(cls.__name__, cls)
    return out


def held(obj: object, depth: int = 3) -> list[object]:
    """The modules obj holds as attributes, down to `depth` objects."""
    out: list[object] = []
    todo = [(obj, 0)]
    while todo:
        cur, level = todo.pop()
        for value in vars(cur).values():
            if isinstance(value, standins.Module) and value is not obj and level < depth:
                out.append(value)
                todo.append((value, level + 1))
    return out


def is_language_model(obj: object) -> bool:
    return "lm_head" in vars(obj) or "logits_processor" in vars(obj)


def is_decoder(obj: object) -> bool:
    return "layers" in vars(obj) and not is_language_model(obj)


@cache
def runs() -> tuple[dict[str, dict[str, tuple[bool, bool, bool]]], ...]:
    """Per run, per served class, per member: (the instance has it, a held language model has
    it, the instance owns a head and holds a decoder)."""
    out = []
    for flip in (False, True):
        with choices(flip):
            found: dict[str, dict[str, tuple[bool, bool, bool]]] = {}
            for name, cls in registered().items():
                obj = cls(standins.config())
                inner = held(obj)
                owns = is_language_model(obj) and any(is_decoder(h) for h in inner)
                found[name] = {m: (hasattr(obj, m), any(is_language_model(h) and hasattr(h, m) for h in inner), owns)
                               for m in METHODS}
            out.append(found)
    return tuple(out)


def truth() -> set[tuple[str, str, str]]:
    """(served class, code, member) that execution says check must report; an owner's gap as
    EGL040 (EGL041 is the same gap where eaglelint writes no fix)."""
    first, second = runs()
    assert set(first) == set(second)
    out = set()
    for name in first:
        for member, method in METHODS.items():
            states = [run[name][member] for run in (first, second)]
            lacking = [not has for has, _, _ in states]
            if not any(lacking):
                continue
            if all(provided for _, provided, _ in states):
                out.add((name, code_for(method) if all(lacking) else UNRESOLVED, member))
            elif all(lacking) and all(owns for _, _, owns in states) and method.called_on == "target":
                out.add((name, OWNER_CODE, member))
    return out


@cache
def findings():
    return check_files(discover([ROOT]).files, CheckOptions(tuple(PACKS))).findings


def reported() -> set[tuple[str, str, str]]:
    """(served class, code, member) of the findings: a finding at a base counts for the served
    subclasses it names."""
    served_names = set(runs()[0])
    out = set()
    for f in findings():
        code = OWNER_CODE if f.code == OWNER_NO_FIX_CODE else f.code
        for name in (f.class_name, *(s.split(" (")[0] for s in f.subclasses)):
            if name in served_names:
                out.add((name, code, f.method))
    return out


def test_the_package_runs_on_the_standins_both_ways():
    first, second = runs()
    assert first and set(first) == set(second)
    # the choices did go both ways: a member one run has and the other lacks
    assert any(first[n][m][0] != second[n][m][0] for n in first for m in METHODS)


def test_every_shape_has_a_gap_when_run():
    expected_classes = {"TextModelOwnerForConditionalGeneration", "DeepNoteForCausalLM",
                        "PkgVLForConditionalGeneration", "PkgOwnerForCausalLM",
                        "EnvChosenForConditionalGeneration", "TestChosenForConditionalGeneration"}
    assert expected_classes <= {name for name, _, _ in truth()}


def test_check_reports_exactly_what_execution_finds():
    assert reported() == truth()


def test_the_registry_reading_serves_what_the_registry_imports():
    """A subpackage's classes registered by a top-level `EntryClass +=` are served; the
    subpackage's own EntryClass is not read (the registry never imports the module)."""
    reading = served(Resolver(Project()), str(MODELS / "shapes_lm.py"))
    assert set(reading.by_name) == set(runs()[0])


def test_support_rows_follow_execution():
    rows = {r.entry: r.status for r in support_matrix([ROOT], PACKS) if r.pack == "eagle3"}
    targets = {m for m, method in METHODS.items() if method.called_on == "target" and method.required}
    gaps = {}
    for name, code, member in truth():
        if member in targets:
            gaps.setdefault(name, set()).add(code)
    want = {}
    for name in runs()[0]:
        codes = gaps.get(name, set())
        want[name] = UNKNOWN if UNRESOLVED in codes else IMPLEMENTABLE if OWNER_CODE in codes else \
            FIXABLE if codes else SUPPORTED
    assert rows == want


@pytest.mark.parametrize("path", sorted(MODELS.rglob("*.py")), ids=lambda p: p.name)
def test_inline_expectations_match_the_findings(path: Path):
    found = {(f.line, f.code, f.method) for f in findings() if Path(f.path).resolve() == path.resolve()}
    assert found == expected(path)


def test_a_gap_two_objects_down_is_fixed_through_the_path_to_the_model():
    """The delegation of a member the thinker's language model has is written through
    `self.thinker.language_model` (analysis/sglang/wrappers.py follows the dotted attribute)."""
    deep = [f for f in findings() if f.wrapper_attribute == "thinker.language_model"]
    assert deep and all(f.fixable for f in deep), [(f.method, f.fix_refusal) for f in deep]
