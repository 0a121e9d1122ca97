"""The command line as users and CI meet it: exit codes, JSON schema, errors, help."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, REPO

MODELS = FIXTURES / "check" / "sglang" / "srt" / "models"


def run(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})})


def test_findings_exit_1_and_json_schema():
    done = run("check", "--output-format", "json", MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1
    rows = json.loads(done.stdout)
    assert {r["method"] for r in rows} == {"get_embed_and_head", "set_eagle3_layers_to_capture",
                                           "set_embed_and_head"}
    for row in rows:
        assert row.keys() == documented_json_schema().keys()
        assert row["class"] == "PlainWrapperForConditionalGeneration"
        assert row["line"] == 8 and row["column"] == 1


def test_clean_file_exits_0():
    done = run("check", MODELS / "ok_delegating.py")
    assert done.returncode == 0, done.stdout


def test_missing_path_among_good_ones_is_reported_and_run_goes_on(tmp_path):
    done = run("check", "--output-format", "json", tmp_path / "nope.py", MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1
    codes = [r["code"] for r in json.loads(done.stdout)]
    assert codes.count("EGL999") == 1 and codes.count("EGL001") == 2


def test_nothing_checkable_exits_2_without_traceback(tmp_path):
    done = run("check", tmp_path / "nope")
    assert done.returncode == 2
    assert "no such file" in done.stderr and "Traceback" not in done.stderr


def test_no_path_and_no_sglang_exits_2_saying_what_to_pass(tmp_path):
    done = run("check", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 2
    assert "pass the folder" in done.stderr


def test_no_path_finds_checkout_layout(tmp_path):
    models = tmp_path / "python" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    for name in ("base_llm.py", "derived_llm.py", "wrapper_plain_assign.py"):
        (models / name).write_text((MODELS / name).read_text())
    done = run("check", "--output-format", "json", cwd=tmp_path, env={"PYTHONPATH": str(REPO)})
    assert done.returncode == 1
    assert {Path(r["path"]).name for r in json.loads(done.stdout)} == {"wrapper_plain_assign.py"}


def test_select_and_ignore_filter_codes():
    path = MODELS / "wrapper_plain_assign.py"
    only = json.loads(run("check", "--output-format", "json", "--select", "EGL002", path).stdout)
    assert [r["code"] for r in only] == ["EGL002"]
    done = run("check", "--ignore", "EGL001,EGL002", path)
    assert done.returncode == 0


def test_unknown_code_or_interface_is_a_usage_error():
    assert run("check", "--select", "XYZ1", MODELS).returncode == 2
    assert run("check", "--interface", "nope", MODELS).returncode == 2


def test_other_attribute_names_found_by_what_they_hold_and_wrapper_attribute_restricts(tmp_path):
    (tmp_path / "base_llm.py").write_text((MODELS / "base_llm.py").read_text())
    (tmp_path / "fork.py").write_text(
        "from base_llm import BaseLLMForCausalLM\n\n\nclass ForkWrapper:\n"
        "    def __init__(self, config):\n        self.llm = BaseLLMForCausalLM(config)\n"
    )
    eagle3 = {"get_embed_and_head", "set_eagle3_layers_to_capture", "set_embed_and_head"}
    for flags in ((), ("--wrapper-attribute", "llm")):
        done = run("check", "--output-format", "json", *flags, tmp_path)
        assert {r["method"] for r in json.loads(done.stdout)} == eagle3
    assert run("check", "--wrapper-attribute", "language_model", tmp_path).returncode == 0


def test_text_output_groups_by_file_and_counts_by_rule():
    done = run("check", MODELS / "wrapper_plain_assign.py", env={"NO_COLOR": "1"})
    lines = done.stdout.splitlines()
    assert lines[0].endswith("wrapper_plain_assign.py")
    assert "EGL001 x2" in done.stdout and "EGL002 x1" in done.stdout
    assert "\x1b[" not in done.stdout


def test_rules_and_rule_docs():
    listing = run("rules").stdout
    for code in ("EGL001", "EGL002", "EGL010", "EGL999"):
        assert code in listing
    doc = run("rule", "EGL001")
    assert doc.returncode == 0 and "Bad" in doc.stdout and "Good" in doc.stdout
    assert run("rule", "EGL123").returncode == 2


def test_help_shows_examples():
    assert "Examples:" in run("check", "--help").stdout


def test_text_output_explains_entry_class_in_a_legend():
    marked = run("check", MODELS / "wrapper_plain_assign.py", env={"NO_COLOR": "1"}).stdout
    assert "(EntryClass)" in marked
    legend = [line for line in marked.splitlines() if line.startswith("(EntryClass):")]
    assert len(legend) == 1 and "EntryClass" in legend[0][len("(EntryClass):"):]
    plain = run("check", MODELS / "unresolved_wrapped.py", "--select", "EGL010", env={"NO_COLOR": "1"}).stdout
    assert ("(EntryClass):" in plain) == (" (EntryClass)" in plain.replace("(EntryClass):", ""))


JSON_TYPES = {"string": (str,), "integer": (int,), "boolean": (bool,), "string or null": (str, type(None)),
              "integer or null": (int, type(None)), "list of strings": (list,)}


def documented_json_schema() -> dict[str, str]:
    """Key -> type, as README's "JSON output" table documents them (its rows name one or
    more keys and as many types)."""
    section = (REPO / "README.md").read_text().split("### JSON output", 1)[1].split("\n## ", 1)[0]
    schema = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        keys = [k.strip().strip("`") for k in cells[0].split(",")]
        types = [t.strip() for t in cells[1].split(",")]
        assert len(keys) == len(types), row
        schema.update(zip(keys, types, strict=True))
    return schema


def test_json_output_has_every_documented_key_with_its_documented_type():
    """The whole fixture tree (every rule family) and a changed file's dependents; the
    README's table is the schema. Each key must also be set somewhere, so a key always
    left null (or false, or empty) fails too."""
    schema = documented_json_schema()
    assert {"interface", "subclasses", "provider_class", "wrapper_attribute"} <= schema.keys()
    assert set(schema.values()) <= JSON_TYPES.keys(), schema
    changed = FIXTURES / "dependents" / "sglang" / "srt" / "models" / "deepseek_v2.py"
    rows = [row for given in (FIXTURES / "check", changed)
            for row in json.loads(run("check", "--output-format", "json", given).stdout)]
    assert len(rows) >= 100
    for row in rows:
        assert row.keys() == schema.keys(), row
        for key, kind in schema.items():
            value = row[key]
            assert type(value) in JSON_TYPES[kind] and not (kind == "integer" and type(value) is bool), (key, row)
        assert all(type(name) is str for name in row["subclasses"])
    for key in schema:
        assert any(row[key] not in (None, [], False) for row in rows), f"{key} is never set"


def test_json_member_fields_say_which_pack_attribute_and_defining_class():
    """Read independently of eaglelint: the pack that lists `method` (rules/interfaces/*.toml),
    the attribute the wrapper (or a base) assigns on self, the class whose body defines `method`
    at `wrapped_path:wrapped_line` (ast), and each
    subclass named in `subclasses` (a class of the tree whose bases reach `class`)."""
    import ast
    import tomllib

    packs = {}
    for path in (REPO / "rules" / "interfaces").glob("*.toml"):
        data = tomllib.loads(path.read_text())
        for member in data.get("members", []) + data.get("methods", []):
            packs.setdefault(member["name"], set()).add(data["name"])
    bases = {}  # class name -> names of its bases, over the fixture tree
    held = {}  # class name -> the attributes its methods assign on self
    for path in (FIXTURES / "check").rglob("*.py"):
        try:
            tree = ast.parse(path.read_bytes())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases)
                held.setdefault(node.name, set()).update(  # self.x = ..., self.x: T = ..., a, self.x = ...
                    t.attr for a in ast.walk(node) if isinstance(a, ast.Assign | ast.AnnAssign)
                    for target in (a.targets if isinstance(a, ast.Assign) else [a.target]) for t in ast.walk(target)
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self")

    def inherits(cls: str, ancestor: str, seen=()) -> bool:
        return any(b == ancestor or (b not in seen and inherits(b, ancestor, (*seen, b))) for b in bases.get(cls, ()))

    def assigned(cls: str) -> set[str]:  # on self, by the class or any base in the tree
        return held.get(cls, set()).union(*(held.get(b, set()) for b in bases if inherits(cls, b)))

    rows = json.loads(run("check", "--output-format", "json", FIXTURES / "check").stdout)
    members = [r for r in rows if r["code"] in ("EGL001", "EGL002", "EGL003")]
    assert len(members) >= 50 and any(r["provider_class"] != r["wrapped_class"] for r in members)
    for row in members:
        assert row["interface"] in packs[row["method"]], row
        # a path (`thinker.language_model`): the class assigns its first attribute, a class of the tree the rest
        first, *rest = row["wrapper_attribute"].split(".")
        assert first in assigned(row["class"].rsplit(".", 1)[-1]), row
        assert all(any(attr in attrs for attrs in held.values()) for attr in rest), row
        tree = ast.parse(Path(row["wrapped_path"]).read_bytes())
        definers = [c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body
                    if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name == row["method"]
                    and f.lineno == row["wrapped_line"]]
        # added after the body: `Cls.method = f` / `setattr(Cls, "method", f)` at that line, or the
        # class (at that line) is decorated by one that sets it
        definers += [t.value.id for n in tree.body if isinstance(n, ast.Assign) and n.lineno == row["wrapped_line"]
                     for t in n.targets if isinstance(t, ast.Attribute) and t.attr == row["method"]
                     and isinstance(t.value, ast.Name)]
        definers += [c.name for c in tree.body if isinstance(c, ast.ClassDef) and c.lineno == row["wrapped_line"]
                     and c.decorator_list]
        assert definers == [row["provider_class"].rsplit(".", 1)[-1]], row
    with_subclasses = [r for r in rows if r["subclasses"]]
    assert len(with_subclasses) >= 3
    for row in with_subclasses:
        # a subclass in another file is named with its file: `Child (child.py)`
        assert all(inherits(sub.split(" (")[0], row["class"].rsplit(".", 1)[-1]) for sub in row["subclasses"]), row


def test_the_command_line_ends_without_tearing_down_yet_its_report_is_whole(tmp_path):
    """`python -m eaglelint` (cli.main `entry`) leaves at once after a run, without freeing its
    objects one by one; what it wrote to a pipe and to a file is whole, and the exit code is the
    run's. A program calling `main()` gets control back (the line after it runs)."""
    report = tmp_path / "report.json"
    done = run("check", "--output-format", "json", MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1 and len(json.loads(done.stdout)) == 3
    done = run("check", "--output-format", "json", "--output-file", report, MODELS / "wrapper_plain_assign.py")
    assert done.returncode == 1 and len(json.loads(report.read_text())) == 3
    assert run("check", "--no-such-option").returncode == 2
    diff = run("fix", "--diff", MODELS / "wrapper_plain_assign.py")  # written to sys.stdout, not echoed
    assert diff.stdout.rstrip().endswith("EntryClass = [PlainWrapperForConditionalGeneration]")
    # what is still in a buffer when the run ends is written before the process leaves
    buffered = ("import sys\nimport eaglelint.cli.main\ncli = sys.modules['eaglelint.cli.main']\n"
                "cli.main = lambda: sys.stdout.write('left in the buffer') and sys.exit(3)\ncli.entry()\n")
    buffering = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe is block-buffered
    done = subprocess.run([sys.executable, "-c", buffered], capture_output=True, text=True, env=buffering)
    assert (done.stdout, done.returncode) == ("left in the buffer", 3)
    code = ("import sys\nfrom eaglelint.cli import main\nsys.argv = ['eaglelint', 'check', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n    print('exit', exc.code)\nprint('came back')\n")
    done = subprocess.run([sys.executable, "-c", code, MODELS / "wrapper_plain_assign.py"], capture_output=True,
                          text=True)
    assert done.stdout.splitlines()[-2:] == ["exit 1", "came back"]


def test_the_console_script_is_the_entry_that_leaves_at_once():
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["eaglelint"] == "eaglelint.cli:entry"


def test_a_program_that_calls_main_gets_its_cycle_collector_back():
    """The command line runs without the cycle collector (cli/main.py); a program that calls
    `main()` has it on again afterwards, as before the call, and one that had it off keeps it off."""
    code = ("import gc, sys\nfrom eaglelint.cli import main\n"
            "if sys.argv[2] == 'off':\n    gc.disable()\n"
            "sys.argv = ['eaglelint', 'check', '-q', sys.argv[1]]\n"
            "import eaglelint.checks.registry as registry\nchecks = registry.run_checks\n"
            "registry.run_checks = lambda c: (print('during', gc.isenabled()), checks(c))[1]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint('after', gc.isenabled())\n")
    for before, after in (("on", "True"), ("off", "False")):
        done = subprocess.run([sys.executable, "-c", code, MODELS / "wrapper_plain_assign.py", before],
                              capture_output=True, text=True)
        said = [line for line in done.stdout.splitlines() if line.startswith(("during", "after"))]
        assert said == ["during False", f"after {after}"], done.stdout + done.stderr
