"""Metamorphic tests of the capture chain on real SGLang releases.

Each case rewrites a served model's capture code in a copy of the release's models package
without changing what it does at run time (tests/chain_rewrites.py: a helper extracted, a
list updated in place, a flag renamed, ...), and asks the chain again. The verdict may stay
or become unknown; it must never flip: no chain error (holds False, or an EGL050-EGL053
finding) where the original is clean, never clean (holds True and no finding) where the
original is broken.

The models package is copied once per release per run; a case writes only the files its
rewrite changes and puts them back afterwards. Each verdict is taken by a fresh Project,
which keeps no on-disk cache (only the command line gives it one), so a rewritten file is
always read as written.
"""

from __future__ import annotations

import ast
import contextlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from chain_rewrites import REWRITES, Models, Roles, roles, unparsed

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.python.resolve import ClassEntity, Resolver
from eaglelint.analysis.sglang.capture_chain import CaptureChainAnalysis
from eaglelint.analysis.sglang.owners import OwnerAnalysis
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

pytestmark = [pytest.mark.release, pytest.mark.slow]

CHAIN_CODES = frozenset({"EGL050", "EGL051", "EGL052", "EGL053"})

# (release, module, served class, its verdict as released, read by hand in the source)
TARGETS = [
    ("0.5.9", "llama.py", "LlamaForCausalLM", "clean"),
    ("0.5.9", "qwen2_moe.py", "Qwen2MoeForCausalLM", "clean"),
    # no set_eagle3_layers_to_capture yet at 0.5.9: nothing to rewrite, kept to say so
    ("0.5.9", "qwen3_vl.py", "Qwen3VLForConditionalGeneration", "no member"),
    ("0.5.9", "kimi_k25.py", "KimiK25ForConditionalGeneration", "no member"),
    ("0.5.21", "qwen3_vl.py", "Qwen3VLForConditionalGeneration", "clean"),
    ("0.5.21", "kimi_k25.py", "KimiK25ForConditionalGeneration", "clean"),
    # the inherited Qwen3-VL setter writes a list the Qwen3.5 decoder never reads: EGL051
    ("0.5.21", "qwen3_5.py", "Qwen3_5ForConditionalGeneration", "broken"),
    ("0.5.22", "qwen3_5.py", "Qwen3_5ForConditionalGeneration", "clean"),
    ("0.5.23", "llama.py", "LlamaForCausalLM", "clean"),
    ("0.5.23", "qwen2_moe.py", "Qwen2MoeForCausalLM", "clean"),
    ("0.5.23", "qwen3_vl.py", "Qwen3VLForConditionalGeneration", "clean"),
    ("0.5.23", "kimi_k25.py", "KimiK25ForConditionalGeneration", "clean"),
]
TARGET_IDS = [f"{v}-{cls}" for v, _, cls, _ in TARGETS]
# the targets with a member, each rewritten in every way that finds its place there (a rewrite
# that finds none is not a case: test_every_rewrite_applies_somewhere keeps each kind in use)
REWRITTEN = [t for t in TARGETS if t[3] != "no member"]
REWRITTEN_IDS = [f"{v}-{cls}" for v, _, cls, _ in REWRITTEN]


@dataclass(frozen=True)
class Verdict:
    holds: bool | None  # the chain's; None also where the class has no capture member
    codes: frozenset[str]  # check's chain findings on the served class
    member: bool = True

    @property
    def state(self) -> str:
        if not self.member:
            return "no member"
        if self.holds is False or self.codes:
            return "broken"
        return "clean" if self.holds else "unknown"

    def __str__(self) -> str:
        return self.state + (f" {','.join(sorted(self.codes))}" if self.codes else "")


def verdict(path: Path, cls: str) -> Verdict:
    resolver = Resolver(Project())
    chain = CaptureChainAnalysis(resolver, OwnerAnalysis(resolver)).chain(ClassEntity(str(path), cls))
    found = check_files(discover([path]).files, CheckOptions(tuple(select_interfaces(None)))).findings
    codes = frozenset(f.code for f in found if f.code in CHAIN_CODES and f.class_name == cls)
    if chain is None:
        return Verdict(None, codes, member=False)
    return Verdict(chain.holds, codes)


def flips(before: Verdict, after: Verdict) -> bool:
    """The property: a clean original stays clean or unknown, a broken one broken or unknown."""
    if before.state == "clean":
        return after.state == "broken"
    if before.state == "broken":
        return after.state == "clean"
    return before.state != after.state and after.state != "unknown"


@contextlib.contextmanager
def applied(files: dict[Path, str]):
    saved = {path: path.read_bytes() if path.exists() else None for path in files}
    try:
        for path, text in files.items():
            path.write_text(text, encoding="utf-8")
        yield
    finally:
        for path, raw in saved.items():
            if raw is None:
                path.unlink()
            else:
                path.write_bytes(raw)


class Releases:
    """The copied models packages, their role readings and rewrites, each made once."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.factory = tmp_path_factory
        self._models: dict[str, Models] = {}
        self._roles: dict[tuple[str, str], Roles] = {}
        self._rewritten: dict[tuple[tuple, str], dict[Path, str] | None] = {}
        self._original: dict[tuple, Verdict] = {}

    def models(self, version: str) -> Models:
        if version not in self._models:
            from fetch_sglang import release_root

            root = self.factory.mktemp(f"sglang-{version}") / "sglang" / "srt" / "models"
            shutil.copytree(release_root(version) / "sglang" / "srt" / "models", root)
            self._models[version] = Models(root)
        return self._models[version]

    def roles(self, target: tuple) -> Roles:
        version, module, cls, _ = target
        if (version, cls) not in self._roles:
            models = self.models(version)
            self._roles[version, cls] = roles(models, models.root / module, cls)
        return self._roles[version, cls]

    def rewritten(self, target: tuple, kind: str) -> dict[Path, str] | None:
        if (target, kind) not in self._rewritten:
            self._rewritten[target, kind] = REWRITES[kind](self.models(target[0]), self.roles(target))
        return self._rewritten[target, kind]

    def path(self, target: tuple) -> Path:
        return self.models(target[0]).root / target[1]

    def original(self, target: tuple) -> Verdict:
        if target not in self._original:
            self._original[target] = verdict(self.path(target), target[2])
        return self._original[target]


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    return Releases(tmp_path_factory)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_original_verdict_is_the_hand_read_one(releases, target):
    assert releases.original(target).state == target[3]


def applicable(releases, target) -> dict[str, dict[Path, str]]:
    """The rewrites that find their place in this target, with the files each writes."""
    found = {kind: releases.rewritten(target, kind) for kind in REWRITES}
    return {kind: files for kind, files in found.items() if files is not None}


@pytest.mark.parametrize("target", REWRITTEN, ids=REWRITTEN_IDS)
def test_rewrites_keep_the_verdict_or_make_it_unknown(releases, target):
    before = releases.original(target)
    cases = applicable(releases, target)
    flipped = []
    for kind, files in cases.items():
        with applied(files):
            after = verdict(releases.path(target), target[2])
        if flips(before, after):
            flipped.append(f"{kind}: {before} -> {after}")
    assert len(cases) >= 8 and flipped == []


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_unparsing_alone_keeps_the_verdict(releases, target):
    """The control for every rewrite: `ast.unparse` drops comments and moves lines."""
    with applied(unparsed(releases.models(target[0]), releases.roles(target))):
        after = verdict(releases.path(target), target[2])
    assert after == releases.original(target)


@pytest.mark.parametrize("target", REWRITTEN, ids=REWRITTEN_IDS)
def test_each_rewrite_changes_the_code_and_compiles(releases, target):
    unchanged = []
    for kind, files in applicable(releases, target).items():
        changed = []
        for path, text in files.items():
            tree = ast.parse(text)
            compile(tree, str(path), "exec")
            if not path.exists() or ast.dump(tree) != ast.dump(ast.parse(path.read_text(encoding="utf-8"))):
                changed.append(path)
        if not changed:
            unchanged.append(kind)
    assert unchanged == []


@pytest.mark.parametrize("kind", list(REWRITES))
def test_every_rewrite_applies_somewhere(releases, kind):
    assert any(releases.rewritten(target, kind) is not None for target in TARGETS)


def test_roles_are_found_where_a_member_exists(releases):
    """The rewrites' reading of the source: every target with the member has a served
    forward that unpacks under a flag and a decoder that returns what it collects."""
    for target in TARGETS:
        found = releases.roles(target)
        if target[3] == "no member":
            assert found.member is None
        else:
            assert found.flag and found.decoder_forward and found.aux, target
