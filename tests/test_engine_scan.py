"""`eaglelint interfaces`: the engine scan on a miniature tree whose uses carry inline markers,
and the drift comparison with the interface packs."""

import dataclasses
import json
import re

from click.testing import CliRunner
from conftest import FIXTURES

from eaglelint.cli import cli
from eaglelint.drift.compare import compare, locate_root, release_version, version_key
from eaglelint.drift.scan import load_scan_rules, scan_engine
from eaglelint.packs import Interface, InterfaceMethod

TREE = FIXTURES / "engine"
MARK = re.compile(r"#\s*engine:\s*(\w+)\s+(\w+)(\s+guarded)?")


def expected() -> set[tuple[str, int, str, str, bool]]:
    out = set()
    for path in TREE.rglob("*.py"):
        rel = path.relative_to(TREE).as_posix()
        for lineno, line in enumerate(path.read_text().splitlines(), 1):
            m = MARK.search(line)
            if m:
                out.add((rel, lineno, m.group(1), m.group(2), bool(m.group(3))))
    return out


def scan():
    return scan_engine(TREE, load_scan_rules(), release_version(TREE))


def test_every_marked_use_is_found_and_nothing_else():
    found = {(s.path, s.line, n.name, s.how, s.guarded) for n in scan().names.values() for s in n.sites}
    assert found == expected()


def test_required_means_some_use_is_unguarded():
    names = scan().names
    assert names["capture_layers"].required  # hasattr check that raises, then a plain call
    assert names["get_embed_and_head"].required
    assert not names["bind_context"].required  # `if not hasattr(...): return` guards what follows
    assert not names["get_width"].required  # isinstance with a runtime-checkable protocol
    assert not names["start_layer"].required


def test_which_model_is_told_by_the_expression():
    names = scan().names
    assert names["get_embed_and_head"].on == "target"
    assert names["set_embed_and_head"].on == "draft"
    assert names["load_lm_head_from_target"].on == "draft"  # through a local alias
    assert names["capture_layers"].on == "any"


def test_models_folder_and_foreign_objects_are_not_scanned():
    names = scan().names
    assert not {"never_scanned", "not_the_model", "set_nothing", "set_other", "not_a_param_root"} & set(names)


def _pack(name: str, *members: tuple[str, str]) -> Interface:
    return Interface(name, name, False, tuple(
        InterfaceMethod(n, False, "target", "", "", name, since=since) for n, since in members))


def test_drift_names_uncovered_uses_and_unused_entries():
    rules = load_scan_rules()
    rules = dataclasses.replace(rules, known={**rules.known, "for_draft": "", "get_width": "", "bind_context": ""})
    packs = [_pack("a", ("get_embed_and_head", "0.5.9"), ("set_embed_and_head", "0.5.9"), ("gone", "0.5.9")),
             _pack("b", ("future_hook", "0.6.0"))]
    drift = compare(scan(), packs, rules)
    assert {n.name for n in drift.uncovered} == {"capture_layers", "set_layers_to_capture",
                                                 "capture_aux_hidden_states", "start_layer"}
    assert [m.name for m in drift.unused] == ["gone"]
    assert [m.name for m in drift.not_yet] == ["future_hook"]  # newer than the tree's 0.5.23
    assert drift.found


def test_cli_exits_1_on_drift_and_lists_it_in_json():
    result = CliRunner().invoke(cli, ["interfaces", str(TREE), "--interface", "eagle3", "--output-format", "json"])
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["version"] == "0.5.23"
    assert set(data["drift"]["uncovered"]) == {"bind_context", "capture_layers", "for_draft", "get_width",
                                               "set_layers_to_capture", "capture_aux_hidden_states",
                                               "start_layer"}
    assert [(u["interface"], u["name"]) for u in data["drift"]["unused"]] == [("eagle3",
                                                                                "set_eagle3_layers_to_capture")]
    assert "eval" in data["ignored"] and "eval" not in {n["name"] for n in data["names"]}


def test_cli_without_sglang_source_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["interfaces", str(tmp_path)])
    assert result.exit_code == 2


def test_root_is_found_from_a_checkout_or_the_package(tmp_path):
    (tmp_path / "python" / "sglang" / "srt").mkdir(parents=True)
    assert locate_root(tmp_path) == tmp_path / "python"
    assert locate_root(tmp_path / "python" / "sglang") == tmp_path / "python"
    assert locate_root(tmp_path / "elsewhere") is None


def test_versions_order_numerically():
    assert version_key("0.5.10") > version_key("0.5.9")
    assert version_key("0.5.10.post1") > version_key("0.5.10")


def test_unparsable_engine_file_is_reported_not_fatal(tmp_path):
    spec = tmp_path / "sglang" / "srt" / "speculative"
    spec.mkdir(parents=True)
    (spec / "broken.py").write_text("def f(model_runner:\n    model_runner.model.x()\n")
    (spec / "fine.py").write_text("def f(model_runner):\n    model_runner.model.set_thing()\n")
    (spec / "deep.py").write_text("def g(model_runner):\n    return model_runner.model.y" + " + 1" * 20000 + "\n")
    result = scan_engine(tmp_path, load_scan_rules())
    assert set(result.names) == {"set_thing"}
    assert {path for path, _ in result.errors} == {"sglang/srt/speculative/broken.py",
                                                    "sglang/srt/speculative/deep.py"}
    cli_result = CliRunner().invoke(cli, ["interfaces", str(tmp_path)])
    assert cli_result.exit_code == 1 and "not scanned: sglang/srt/speculative/broken.py" in cli_result.output


def test_cli_needs_an_sglang_pack_to_compare_with():
    assert CliRunner().invoke(cli, ["interfaces", str(TREE), "--interface", "vllm"]).exit_code == 2
