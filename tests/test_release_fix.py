"""`eaglelint fix --write` on copies of real SGLang releases."""

import __future__

import ast
import difflib
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from fetch_sglang import release_root

pytestmark = pytest.mark.release
EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
RUFF = [sys.executable, "-m", "ruff", "check", "--select", "F821,F811", "--output-format", "json",
        "--no-cache", "--isolated"]


def eaglelint(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd)


def copy_models(version: str, tmp_path: Path) -> Path:
    target = tmp_path / version / "sglang" / "srt" / "models"
    shutil.copytree(release_root(version) / "sglang" / "srt" / "models", target)
    return target


def delegations(path: Path, cls: str) -> dict[str, tuple[list[str], set[str]]]:
    """method -> (parameter names, attribute calls like language_model.get_embed_and_head)."""
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    out = {}
    for fn in node.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in EAGLE3:
            params = [a.arg for a in fn.args.args]
            calls = {ast.unparse(c.func).removeprefix("self.") for c in ast.walk(fn)
                     if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)}
            out[fn.name] = (params, calls)
    return out


def test_0_5_9_kimi_k25_fixed_like_0_5_10_by_hand(tmp_path):
    models = copy_models("0.5.9", tmp_path)
    kimi = models / "kimi_k25.py"
    before = kimi.read_text()
    assert eaglelint("fix", "--write", kimi).returncode == 0
    assert eaglelint("check", kimi).returncode == 0
    py_compile.compile(str(kimi), doraise=True)
    ours = delegations(kimi, "KimiK25ForConditionalGeneration")
    upstream = delegations(release_root("0.5.10") / "sglang/srt/models/kimi_k25.py",
                           "KimiK25ForConditionalGeneration")
    assert set(ours) == set(upstream) == set(EAGLE3)
    for name in EAGLE3:
        assert ours[name][0] == upstream[name][0]
        assert f"language_model.{name}" in ours[name][1] & upstream[name][1]
    after = kimi.read_text()
    removed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines())
               if line.startswith("- ")]
    assert all(re.match(r"- (from \S+ )?import ", line) for line in removed), removed
    assert eaglelint("fix", "--write", kimi).returncode == 0
    assert kimi.read_text() == after


class _Recorder:
    """A language model with the three methods: records each call and returns a marker."""

    def __init__(self):
        self.calls = []

    def set_eagle3_layers_to_capture(self, *args, **kwargs):
        self.calls.append(("set_eagle3_layers_to_capture", args, kwargs))

    def get_embed_and_head(self, *args, **kwargs):
        self.calls.append(("get_embed_and_head", args, kwargs))
        return ("embed", "head")

    def set_embed_and_head(self, *args, **kwargs):
        self.calls.append(("set_embed_and_head", args, kwargs))


class _Bare:
    """A language model without them (InternLM2-like)."""


CALLS = {
    "set_eagle3_layers_to_capture": [(), ([1, 5, 9],), ((), {"layer_ids": [2]})],
    "get_embed_and_head": [()],
    "set_embed_and_head": [("E", "H"), ((), {"embed": "E", "head": "H"})],
}


def _wrapper_class(path: Path, cls: str) -> type:
    """A plain class holding just the wrapper's three methods, executed from their source
    (annotations left unevaluated: no torch here)."""
    source = path.read_text()
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == cls)
    namespace: dict = {}
    for fn in node.body:
        if isinstance(fn, ast.FunctionDef) and fn.name in EAGLE3:
            text = ast.get_source_segment(source, fn, padded=True)
            code = compile(text.replace("\n" + " " * fn.col_offset, "\n").lstrip(), str(path), "exec",
                           flags=__future__.annotations.compiler_flag, dont_inherit=True)
            exec(code, namespace)  # our generated methods and SGLang's own, run on plain objects
    return type(cls, (), {name: namespace[name] for name in EAGLE3})


def _outcome(cls: type, held, method: str, call) -> tuple:
    args, kwargs = (call if len(call) == 2 and isinstance(call[1], dict) else (call, {}))
    wrapper = cls()
    wrapper.language_model = held
    try:
        result = ("returned", getattr(wrapper, method)(*args, **kwargs))
    except Exception as exc:  # the raise when the language model lacks the method is the point
        result = ("raised", type(exc))
    return result, list(getattr(held, "calls", []))


def test_0_5_9_kimi_k25_after_fix_behaves_like_0_5_10_hand_written_methods(tmp_path):
    models = copy_models("0.5.9", tmp_path)
    kimi = models / "kimi_k25.py"
    assert eaglelint("fix", "--write", kimi).returncode == 0
    ours = _wrapper_class(kimi, "KimiK25ForConditionalGeneration")
    upstream = _wrapper_class(release_root("0.5.10") / "sglang/srt/models/kimi_k25.py",
                              "KimiK25ForConditionalGeneration")
    for method, calls in CALLS.items():
        for call in calls:
            for held in (_Recorder, _Bare):
                mine, theirs = _outcome(ours, held(), method, call), _outcome(upstream, held(), method, call)
                assert mine == theirs, (method, call, held.__name__)
            assert _outcome(ours, _Bare(), method, call)[0] == ("raised", AttributeError)


def _ruff(paths: list[Path], root: Path) -> set[tuple[str, str, str]]:
    done = subprocess.run(RUFF + [str(p) for p in paths], capture_output=True, text=True, cwd=root)
    return {(Path(r["filename"]).name, r["code"], re.sub(r"line \d+", "line N", r["message"]))
            for r in json.loads(done.stdout)}


def test_0_5_23_whole_tree_fix_compiles_and_adds_no_undefined_names(tmp_path):
    models = copy_models("0.5.23", tmp_path)
    originals = {p: p.read_bytes() for p in models.rglob("*.py")}
    before = eaglelint("check", "--output-format", "json", models)
    fixable = [f for f in json.loads(before.stdout) if f["fixable"]]
    assert fixable
    ruff_before = _ruff(sorted({Path(f["path"]) for f in fixable}), models)
    done = eaglelint("fix", "--write", models)
    assert done.returncode in (0, 1), done.stderr
    changed = [p for p, raw in originals.items() if p.read_bytes() != raw]
    # and the wrappers over owners the same run gives members (read by hand: Lfm2-VL holds an
    # Lfm2ForCausalLM, Nano-Nemotron-VL a NemotronHForCausalLM; both owners lack them as released)
    wrappers = {"lfm2_vl.py", "nano_nemotron_vl.py"}
    assert {Path(f["path"]).resolve() for f in fixable} | {(models / n).resolve() for n in wrappers} == {
        p.resolve() for p in changed}
    for path in changed:
        py_compile.compile(str(path), doraise=True)
    assert _ruff(changed, models) <= ruff_before
    after = json.loads(eaglelint("check", "--output-format", "json", models).stdout)
    assert [f for f in after if f["fixable"]] == []
    # no capture chain the fix could have mended is left broken: only Qwen4Exp's decoder, which
    # returns (hidden_states, hc_hidden_states) on every non-idle batch (qwen4_exp.py:2170),
    # and no member written can change that (docs/capture-chain.md)
    assert {(Path(f["path"]).name, f["class"], f["code"]) for f in after if f["code"].startswith("EGL05")} == {
        ("qwen4_exp.py", "Qwen4ExpForConditionalGeneration", "EGL052")}
    assert eaglelint("fix", "--write", models).stdout.startswith("Added 0 methods")
    assert os.listdir(models)  # sanity: the tree is still there


@pytest.mark.parametrize("command", [("fix", "--write"), ("check", "--fix")])
def test_0_5_9_one_fix_run_leaves_nothing_fixable(tmp_path, command):
    """0.5.9's Qwen3OmniMoeForConditionalGeneration holds a Qwen3-VL thinker whose class
    gets its owner members from the fix (qwen3_vl.py): only then does the Omni wrapper
    lack them too (qwen3_omni_moe.py). One run writes both."""
    models = copy_models("0.5.9", tmp_path)
    omni = "Qwen3OmniMoeForConditionalGeneration"
    before = [f for f in json.loads(eaglelint("check", "--output-format", "json", models).stdout) if f["fixable"]]
    assert omni not in {f["class"] for f in before}
    done = eaglelint(*command, models)
    assert done.returncode == 1, done.stderr  # findings no fix can address stay (EGL020-022, EGL041)
    assert "converge" not in done.stdout + done.stderr
    after = json.loads(eaglelint("check", "--output-format", "json", models).stdout)
    assert after and [f for f in after if f["fixable"]] == []
    assert set(delegations(models / "qwen3_omni_moe.py", omni)) == {"set_eagle3_layers_to_capture",
                                                                     "get_embed_and_head"}
    # no chain the run wrote is broken: Qwen3.5's VL classes pass Qwen3VLForConditionalGeneration a
    # Qwen3_5ForCausalLM that collects nothing (qwen3_5.py:1029, 1122), so they get a member that raises as
    # the engine's call does now, not the inherited one; the one owner left is JetNemotron, whose JetBlock
    # updates its recurrent state itself (jet_nemotron.py:267), outside the target-verify pass
    assert {f["code"] for f in after} <= {"EGL020", "EGL021", "EGL022", "EGL041"}, [f["message"] for f in after]
    assert [f["class"] for f in after if f["code"] == "EGL041"] == ["JetNemotronForCausalLM"]


def test_0_5_9_qwen3_5_vl_keeps_failing_at_the_engines_call_after_the_fix(tmp_path):
    """The shield: run the fixed member of the subclasses, and the base's, on a bare instance."""
    models = copy_models("0.5.9", tmp_path)
    assert eaglelint("fix", "--write", models / "qwen3_vl.py", models / "qwen3_5.py").returncode in (0, 1)
    for name in ("Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"):
        tree = ast.parse((models / "qwen3_5.py").read_text())
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        member = next(n for n in cls.body if isinstance(n, ast.FunctionDef)
                      and n.name == "set_eagle3_layers_to_capture")
        namespace: dict = {}
        exec(compile(ast.unparse(member), "member", "exec"), namespace)
        for ids in ([1, 2], None):
            with pytest.raises(AttributeError, match="collects no aux hidden states"):
                namespace["set_eagle3_layers_to_capture"](object(), ids)
    assert "set_eagle3_layers_to_capture" in delegations(models / "qwen3_vl.py", "Qwen3VLForConditionalGeneration")


# wrappers that hold their language model under another attribute than language_model
# (read by hand in 0.5.23, see test_release_check.HELD_0_5_23)
HELD = {"minicpmo.py": ("MiniCPMO", "llm"), "nvila.py": ("NVILAForConditionalGeneration", "llm"),
        "nvila_lite.py": ("NVILALiteForConditionalGeneration", "llm"),
        "points_v15_chat.py": ("POINTSV15ChatModel", "llm"),
        "sarashina2_vision.py": ("Sarashina2VisionForCausalLM", "llm"),
        "bailing_mm.py": ("BailingMMNativeForConditionalGeneration", "model"),
        "deepseek_ocr.py": ("DeepseekOCRForCausalLM", "model"), "dots_ocr.py": ("DotsOCRForCausalLM", "model")}


def test_0_5_23_fix_delegates_to_the_held_attribute_and_check_is_then_clean(tmp_path):
    models = copy_models("0.5.23", tmp_path)
    files = [models / name for name in HELD]
    own = {path: set(delegations(path, HELD[path.name][0])) for path in files}  # dots_ocr: get_embed_and_head
    assert eaglelint("fix", "--write", *files).returncode in (0, 1)
    for path in files:
        py_compile.compile(str(path), doraise=True)
        cls, attr = HELD[path.name]
        written = {k: v for k, v in delegations(path, cls).items() if k not in own[path]}
        assert written and all(f"{attr}.{name}" in calls for name, (_, calls) in written.items()), path.name
    after = json.loads(eaglelint("check", "--output-format", "json", *files).stdout)
    # left: Sarashina2-Vision's forward runs self.llm.model itself and calls its own
    # logits_processor without aux hidden states (sarashina2_vision.py 160-172), which no
    # delegation can fix: the aux-path rules, which have no automatic fix
    assert {(Path(f["path"]).name, f["code"]) for f in after} == {
        ("sarashina2_vision.py", code) for code in ("EGL020", "EGL021", "EGL022")}


class _Flagged:
    """A decoder that marks layers as Qwen3.5's does: a list, and a flag on each layer it names."""

    def __init__(self, n):
        self.layers = [types.SimpleNamespace() for _ in range(n)]
        self.layers_to_capture = []

    def mark(self, ids):
        self.layers_to_capture = ids
        for i in ids:
            self.layers[i]._is_layer_to_capture = True

    set_dflash_layers_to_capture = set_eagle3_layers_to_capture = mark

    def state(self):
        return list(self.layers_to_capture), [i for i, layer in enumerate(self.layers)
                                              if getattr(layer, "_is_layer_to_capture", False)]


def _member(path: Path, cls: str, name: str):
    """The method as the class resolves it: its own, else the nearest base's in the same module."""
    classes = {n.name: n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef)}
    node = classes[cls]
    while not any(isinstance(n, ast.FunctionDef) and n.name == name for n in node.body):
        node = classes[ast.unparse(node.bases[0])]
    fn = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace = {"Optional": __import__("typing").Optional}
    exec(compile(ast.unparse(fn), str(path), "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("cls", ["Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"])
def test_0_5_21_text_qwen3_5_member_marks_what_0_5_22_hand_written_one_marks(tmp_path, cls):
    """0.5.21's text Qwen3.5 owners lack the capture member; 0.5.22 wrote it by hand. The one the
    fix reads off the decoder (its flags, through its own set_dflash_layers_to_capture) leaves the
    decoder as 0.5.22's does, for ids and for None."""
    models = copy_models("0.5.21", tmp_path)
    assert eaglelint("fix", "--write", models / "qwen3_5_text.py", models / "qwen3_5.py").returncode in (0, 1)
    ours = _member(models / "qwen3_5_text.py", cls, "set_eagle3_layers_to_capture")
    theirs = _member(release_root("0.5.22") / "sglang/srt/models/qwen3_5_text.py", cls,
                     "set_eagle3_layers_to_capture")
    for ids in ([1, 20, 37], [0], None):
        states = []
        for member in (ours, theirs):
            model = types.SimpleNamespace(pp_group=types.SimpleNamespace(is_last_rank=True), model=_Flagged(48),
                                          capture_aux_hidden_states=False)
            member(model, list(ids) if ids is not None else None)
            states.append((model.model.state(), model.capture_aux_hidden_states))
        assert states[0] == states[1], ids
