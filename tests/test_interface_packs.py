"""The interface packs as data: every entry documented, packs selectable in any combination."""

import json
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES
from test_check_fixtures import FILES, expected, packs_of

from eaglelint.analysis.python.discover import discover
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.checks.vllm_marker import CODE as MARKER_CODE
from eaglelint.packs import RulesError, load_interfaces, select_interfaces

CHECKED = {"0.5.4.post1", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16",
           "0.5.20", "0.5.21", "0.5.22", "0.5.23"}
LINK = re.compile(r"^https://github\.com/sgl-project/sglang/blob/v0\.5\.23/python/sglang/srt/[\w/]+\.py#L\d+$")
MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"


def sglang_members():
    return [m for i in load_interfaces().values() if i.engine == "sglang" for m in i.methods]


@pytest.mark.parametrize("member", sglang_members(), ids=lambda m: f"{m.interface}.{m.name}")
def test_every_sglang_entry_says_since_when_and_links_its_call_site(member):
    assert member.since in CHECKED
    assert LINK.match(member.link), member.link
    assert member.call_site.startswith("sglang/srt/") and member.why


def test_every_pack_member_is_expected_by_a_fixture_checked_with_its_pack():
    """Adding an interface member is the pack TOML and one fixture: each member of each
    pack, read from the TOML, must be expected (`# expect: CODE[member]`) by a fixture that
    is checked with that pack selected; a marker pack (vLLM) by a fixture expecting the
    marker finding. Nothing about the packs is restated here."""
    covered: set[tuple[str, str]] = set()
    for path in FILES:
        packs = packs_of(path)
        for interface in select_interfaces(packs.split(",") if packs else None):
            covered |= {(interface.name, method or code) for _, code, method in expected(path)}
    for pack in load_interfaces().values():
        wanted = [MARKER_CODE] if pack.marker else [m.name for m in pack.methods]
        missing = [name for name in wanted if (pack.name, name) not in covered]
        assert wanted and not missing, f"pack {pack.name}: no fixture checked with it expects {missing}"
    assert [i.name for i in select_interfaces(None)] == [p.name for p in load_interfaces().values() if p.default]


def test_a_pack_without_draft_side_members_checks_alone(tmp_path):
    """dflash has no member the engine calls on a draft: the dependents scan once fell back
    to the default packs' draft members for it and stopped with a KeyError."""
    done = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--no-cache", "--interface", "dflash",
                           "--output-format", "json", str(MODELS / "pack_dflash.py")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "internal error" not in done.stderr and done.returncode == 1, done.stderr
    assert {(r["code"], r["method"]) for r in json.loads(done.stdout)} == {
        (code, method) for _, code, method in expected(MODELS / "pack_dflash.py")}


def test_select_several_packs_all_and_unknown():
    assert [i.name for i in select_interfaces(["eagle3", "dflash"])] == ["eagle3", "dflash"]
    everything = {i.name for i in select_interfaces(["all"])}
    assert {"eagle3", "eagle", "dflash", "draft_embedding", "pipeline_parallel"} <= everything
    assert all(i.engine == "sglang" for i in select_interfaces(["all"]))
    with pytest.raises(RulesError, match="nope"):
        select_interfaces(["eagle3", "nope"])


def check(paths, packs):
    return check_files(discover(paths).files, CheckOptions(tuple(select_interfaces(packs)))).findings


def test_a_member_in_two_packs_is_reported_once():
    findings = check([MODELS / "wrapper_plain_assign.py"], ["eagle3", "eagle"])
    assert sorted((f.code, f.method) for f in findings) == [
        ("EGL001", "get_embed_and_head"), ("EGL001", "set_eagle3_layers_to_capture"),
        ("EGL002", "set_embed_and_head")]


def test_aux_path_rules_run_only_with_a_capture_hook_selected():
    assert {f.code for f in check([MODELS], None)} >= {"EGL020", "EGL021", "EGL022", "EGL023"}
    pp = check([MODELS], ["pipeline_parallel"])
    assert {(f.code, f.method) for f in pp} == {("EGL003", "start_layer"), ("EGL003", "end_layer"),
                                                ("EGL999", None), ("EGL010", None)}


def test_readme_pack_table_lists_each_pack_with_exactly_its_members():
    """README's pack table is checked against the TOML: adding a member to a pack and not
    to the table (or the reverse) fails here, so the two cannot drift apart."""
    readme = (FIXTURES.parent / "README.md").read_text()
    rows = {}
    for line in readme.split("| pack | default | members (since) |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]:
        name, default, members = (cell.strip() for cell in line.strip().strip("|").split("|"))
        rows[name.strip("`")] = (default == "yes", set(re.findall(r"`(\w+)`", members)))
    packs = load_interfaces()
    assert set(rows) == set(packs)
    for name, pack in packs.items():
        named = {pack.marker} if pack.marker else {m.name for m in pack.methods}
        assert rows[name] == (pack.default, named), name
