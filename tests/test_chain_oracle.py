"""The capture chain's verdict against execution, on fixtures whose truth is known by running them.

fixtures/chain_oracle/sglang/srt/models holds small models in SGLang's patterns, each served
class (listed in its module's EntryClass) in one idiom, working or broken. Nothing in them
says which: each is run on stand-ins (tests/sglang_standins.py) the way SGLang's EAGLE-3
drives the served model, twice on fresh instances:

  (a) set_eagle3_layers_to_capture(None), one forward: the logits processor must get a
      non-empty list of aux states, each the output of a real layer;
  (b) set_eagle3_layers_to_capture([1, 4]), one forward: it must get exactly the outputs
      of layers 1 and 4, in that order.

Both also need the final hidden state (not a tuple) as the logits processor's hidden states
and exactly one call. A class works when both hold, is broken otherwise. eaglelint may then
never contradict it: a chain finding (EGL050-EGL053) or `holds is False` only on a broken
class, `holds is True` only on a working one, and a class whose line says `# oracle: decided`
must not be left unknown.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
import types
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
import sglang_standins as standins
from conftest import FIXTURES

from eaglelint.analysis.capture.links import Chain
from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.capture_chain import CaptureChainAnalysis
from eaglelint.analysis.sglang.owners import OwnerAnalysis
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

ROOT = FIXTURES / "chain_oracle"
MODELS = ROOT / "sglang" / "srt" / "models"
CHAIN_CODES = {"EGL050", "EGL051", "EGL052", "EGL053"}
MARK = re.compile(r"#\s*oracle:\s*(decided|may-be-unknown)\s*$")
ASKED = [1, 4]  # the ids of (b), in the engine's numbering: the output of layer k
FINAL = 2**standins.NUM_LAYERS - 1  # the decoder's last hidden state: every layer ran
MIN_WORKING, MIN_BROKEN = 18, 18


@dataclass(frozen=True)
class Served:
    name: str
    path: Path
    mark: str | None  # "decided", "may-be-unknown", or None where the class line has no mark
    idiom: str  # the docstring's first line


def served_classes() -> dict[str, Served]:
    """Every class an EntryClass lists, read from the source (the ids exist before anything runs)."""
    out: dict[str, Served] = {}
    for path in sorted(MODELS.glob("*.py")):
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EntryClass"
                                                    for t in node.targets):
                for elt in node.value.elts:
                    assert elt.id not in out, f"{elt.id} is served twice"
                    cls = classes[elt.id]
                    mark = MARK.search(lines[cls.lineno - 1])
                    doc = (ast.get_docstring(cls) or "").strip().splitlines()
                    out[elt.id] = Served(elt.id, path, mark.group(1) if mark else None, doc[0] if doc else "")
    return out


SERVED = served_classes()


class HarnessError(Exception):
    """The stand-ins, not the model, failed: a name or module they lack, or a constructor that raises."""


@dataclass(frozen=True)
class Outcome:
    works: bool
    how: str


def layer_of(value: object) -> str:
    """The layer whose output a hidden state is (k for 2**(k+1) - 1), else what the value is."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value == 0:
            return "embedding"
        k = (value + 1).bit_length() - 2
        if value == 2 ** (k + 1) - 1 and k < standins.NUM_LAYERS:
            return str(k)
    return repr(value)


def drive(cls: type, layer_ids: list[int] | None) -> str | None:
    """One fresh instance through the engine's two calls; None when the logits processor got what
    the engine needs for layer_ids, else how it went wrong."""
    try:
        model = cls(standins.config())
    except Exception as err:
        raise HarnessError(f"{cls.__name__}(config) raised {type(err).__name__}: {err}") from err
    standins.CALLS.clear()
    step = "set_eagle3_layers_to_capture"
    try:
        # a copy: a member may change the list it is handed, and ASKED is every class's
        model.set_eagle3_layers_to_capture(None if layer_ids is None else list(layer_ids))
        step = "forward"
        model.forward([1, 2, 3], [0, 1, 2], standins.ForwardBatch())
    except (NameError, ImportError) as err:
        raise HarnessError(f"{step} raised {type(err).__name__}: {err}") from err
    except AttributeError as err:
        if standins.is_standin(err.obj):
            raise HarnessError(f"{step}: the stand-in lacks {err.name}") from err
        return f"{step} raises AttributeError: {err}"
    except Exception as err:
        return f"{step} raises {type(err).__name__}: {err}"
    if len(standins.CALLS) != 1:
        return f"the logits processor is called {len(standins.CALLS)} times"
    args, kwargs = standins.CALLS[0]
    hidden = args[1] if len(args) > 1 else kwargs.get("hidden_states")
    aux = args[4] if len(args) > 4 else kwargs.get("aux_hidden_states")
    if hidden != FINAL:
        return f"hidden states {hidden!r} reach the logits processor"
    if not isinstance(aux, list | tuple) or not aux:
        return f"aux states {aux!r} reach the logits processor"
    layers = [layer_of(v) for v in aux]
    if layer_ids is None:
        return None if all(x.isdigit() for x in layers) else f"captures {', '.join(layers)}"
    return None if layers == [str(k) for k in layer_ids] else f"captures layers {', '.join(layers)}"


@cache
def executed() -> tuple[dict[str, Outcome], dict[str, str]]:
    """Each served class's outcome, and the harness errors (by class or module) met on the way."""
    outcomes: dict[str, Outcome] = {}
    harness: dict[str, str] = {}
    with standins.installed(ROOT):
        for path in sorted(MODELS.glob("*.py")):
            try:
                module = importlib.import_module(f"sglang.srt.models.{path.stem}")
            except Exception as err:
                harness[path.name] = f"import raised {type(err).__name__}: {err}"
                continue
            for cls in module.EntryClass:
                try:
                    wrong = [f"{'None' if ids is None else ids}: {how}"
                             for ids in (None, ASKED) if (how := drive(cls, ids)) is not None]
                except HarnessError as err:
                    harness[cls.__name__] = str(err)
                    continue
                outcomes[cls.__name__] = Outcome(not wrong, "; ".join(wrong) or "captures as asked")
    return outcomes, harness


@cache
def chain_findings() -> dict[str, list[tuple[str, int]]]:
    found = check_files(discover([ROOT]).files, CheckOptions(tuple(select_interfaces(None)))).findings
    out: dict[str, list[tuple[str, int]]] = {}
    for f in found:
        if f.code in CHAIN_CODES:
            out.setdefault(f.class_name, []).append((f.code, f.line))
    return out


@cache
def chains() -> CaptureChainAnalysis:
    resolver = Resolver(Project())
    return CaptureChainAnalysis(resolver, OwnerAnalysis(resolver))


def chain_of(served: Served) -> Chain | None:
    return chains().chain(ClassEntity(str(served.path), served.name))


def verdict(chain: Chain | None) -> str:
    if chain is None:
        return "no chain (no capture member found)"
    if chain.holds is False:
        return "holds False: " + "; ".join(f"{b.link.letter}: {b.message}" for b in chain.broken)
    if chain.holds is None:
        return "holds None: " + "; ".join(chain.unknown)
    return "holds True"


def test_every_fixture_module_runs_on_the_standins():
    """A failure here is the harness's, not a model's: every module imports, every served class is
    built, and no step meets a name or attribute the stand-ins lack."""
    outcomes, harness = executed()
    assert harness == {}
    assert set(outcomes) == set(SERVED)


def test_the_standins_leave_sys_modules_as_they_found_it():
    sentinel = types.ModuleType("torch")
    saved = sys.modules.get("torch")
    sys.modules["torch"] = sentinel
    try:
        with standins.installed(ROOT):
            assert sys.modules["torch"] is not sentinel
            importlib.import_module("sglang.srt.models.llama_like")
        assert sys.modules["torch"] is sentinel
        assert not [name for name in sys.modules if name.split(".")[0] == "sglang"]
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


def test_a_gap_in_the_standins_is_a_harness_error_not_a_broken_model():
    class ReadsWhatTheStandinLacks(standins.Module):
        def __init__(self, config):
            self.capture = False

        def set_eagle3_layers_to_capture(self, layer_ids):
            self.capture = True

        def forward(self, input_ids, positions, forward_batch):
            return forward_batch.spec_info

    with pytest.raises(HarnessError):
        drive(ReadsWhatTheStandinLacks, None)


def test_every_served_class_says_its_idiom_and_whether_it_must_be_decided():
    assert {name for name, s in SERVED.items() if s.mark is None} == set()
    assert {name for name, s in SERVED.items() if not s.idiom} == set()


def test_the_package_holds_working_and_broken_classes():
    outcomes, _ = executed()
    working = [n for n, o in outcomes.items() if o.works]
    broken = [n for n, o in outcomes.items() if not o.works]
    assert len(working) >= MIN_WORKING and len(broken) >= MIN_BROKEN, (working, broken)


@pytest.mark.parametrize("name", sorted(SERVED))
def test_verdict_agrees_with_execution(name):
    served = SERVED[name]
    outcomes, harness = executed()
    assert name not in harness, harness[name]
    truth = outcomes[name]
    findings = chain_findings().get(name, [])
    chain = chain_of(served)
    said = f"execution: {'works' if truth.works else 'broken'} ({truth.how}); eaglelint: {verdict(chain)}, " \
           f"findings {findings}"
    if findings or (chain is not None and chain.holds is False):
        assert not truth.works, said
    if chain is not None and chain.holds is True and not findings:
        assert truth.works, said
    if served.mark == "decided":
        assert findings or (chain is not None and chain.holds is not None), said
