"""`eaglelint interfaces` on real SGLang releases (engine code fetched from the registry, cached)."""

import json

import pytest
from click.testing import CliRunner
from fetch_sglang import release_root

from eaglelint.cli import cli

pytestmark = pytest.mark.release
SETUP = "sglang/srt/model_executor/model_runner_components/attention_backend_setup.py"


def interfaces(version: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["interfaces", str(release_root(version)), "--output-format", "json"])
    return result.exit_code, json.loads(result.output)


def by_name(data: dict) -> dict[str, dict]:
    return {n["name"]: n for n in data["names"]}


def sites(entry: dict) -> set[tuple[str, int, str]]:
    return {(s["path"], s["line"], s["how"]) for s in entry["sites"]}


def test_0_5_9_engine_matches_the_packs_with_newer_entries_not_yet_used():
    code, data = interfaces("0.5.9")
    assert (code, data["version"], data["drift"]["uncovered"], data["drift"]["unused"]) == (0, "0.5.9", [], [])
    assert {u["name"] for u in data["drift"]["not_yet"]} == {
        "capture_aux_hidden_states", "set_dflash_layers_to_capture", "set_dspark_layers_to_capture",
        "get_aux_hidden_states_width", "get_pp_proxy_dspark_hidden_size", "get_embed_and_head_for_draft"}
    names = by_name(data)
    eagle3 = names["set_eagle3_layers_to_capture"]
    assert eagle3["required"]
    assert ("sglang/srt/model_executor/model_runner.py", 622, "call") in sites(eagle3)
    assert ("sglang/srt/model_executor/cuda_graph_runner.py", 365, "call") in sites(eagle3)
    assert names["get_embed_and_head"]["on"] == "target"
    assert "draft" in {s["on"] for s in names["set_embed_and_head"]["sites"]}
    assert not names["start_layer"]["required"] and not names["end_layer"]["required"]


def test_0_5_16_engine_adds_dflash_and_dspark_capture_tested_with_hasattr():
    code, data = interfaces("0.5.16")
    assert (code, data["drift"]["uncovered"], data["drift"]["unused"]) == (0, [], [])
    assert {u["name"] for u in data["drift"]["not_yet"]} == {
        "get_aux_hidden_states_width", "get_pp_proxy_dspark_hidden_size", "get_embed_and_head_for_draft"}
    names = by_name(data)
    assert sites(names["set_dspark_layers_to_capture"]) == {(SETUP, 56, "hasattr"), (SETUP, 57, "call")}
    assert not names["set_dflash_layers_to_capture"]["required"]
    assert names["set_eagle3_layers_to_capture"]["required"]
    assert not names["capture_aux_hidden_states"]["required"]


def test_0_5_23_engine_uses_every_pack_entry_and_nothing_unknown():
    code, data = interfaces("0.5.23")
    assert code == 0
    assert data["drift"] == {"uncovered": [], "unused": [], "not_yet": []}
    names = by_name(data)
    eagle3 = names["set_eagle3_layers_to_capture"]
    assert eagle3["required"] and {(SETUP, 55, "hasattr"), (SETUP, 61, "call")} <= sites(eagle3)
    draft = names["get_embed_and_head_for_draft"]
    assert not draft["required"] and draft["on"] == "target"
    assert ("sglang/srt/speculative/pp_draft_embedding.py", 94, "call") in sites(draft)
    assert not names["get_aux_hidden_states_width"]["required"]  # behind a runtime-checkable protocol
    assert names["hot_token_id"]["on"] == "draft" and names["hot_token_id"]["known"]
    assert "forward" in data["ignored"]
