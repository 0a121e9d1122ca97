"""The package's shape, kept by a test: layers and the analysis's rooms import one way, no cycles,
no borrowed private names.

Why a test: the module map in docs/architecture.md is only true while
nothing imports against it; a late import or a private helper borrowed from another
module is how the flat package grew its cycles (checker -> isolation -> wrapper_rules
-> checker; fix <-> vllm_fix through `_find_class`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from conftest import FIXTURES, REPO

from eaglelint.checks.registry import FAMILIES
from eaglelint.findings import INTERNAL_ERROR
from eaglelint.packs import load_codes
from eaglelint.pipeline.suppressions import UNUSED_SUPPRESSION

PACKAGE = REPO / "eaglelint"

# Lowest first; a module may import from its own layer and the layers below it.
# fix/ spans two layers: the edit model and each rule family's file planner, which the
# checks name as their fix (`FIX`), sit below the checks; choosing the planners and
# writing files sits with the other stages that consume findings.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("data", ("eaglelint", "eaglelint.findings", "eaglelint.packs")),
    ("analysis", ("eaglelint.analysis",)),
    ("edits", ("eaglelint.fix.styles", "eaglelint.fix.edits", "eaglelint.fix.delegation", "eaglelint.fix.imports",
               "eaglelint.fix.owner", "eaglelint.fix.members", "eaglelint.fix.marker", "eaglelint.fix.intent")),
    ("checks", ("eaglelint.checks",)),
    ("pipeline", ("eaglelint.fix", "eaglelint.output", "eaglelint.drift", "eaglelint.pipeline", "eaglelint.config")),
    ("entry", ("eaglelint.cli", "eaglelint.pylint_plugin", "eaglelint.__main__")),
]

# The modules at the top of the package: the plain data every stage shares, the configuration,
# and the two entry points whose names users type (`python -m eaglelint`, pylint's
# `--load-plugins eaglelint.pylint_plugin`). Everything else lives in the folder of its stage.
TOP_LEVEL = {"__init__.py", "__main__.py", "findings.py", "packs.py", "config.py", "pylint_plugin.py"}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_of(module: str) -> int:
    """The most specific prefix wins (eaglelint.fix.edits before eaglelint.fix before eaglelint)."""
    best, level = -1, None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, level = len(prefix), index
    assert level is not None, f"{module} is in no layer: add it to LAYERS"
    return level


def imports_of(path: Path, type_only: bool = False) -> list[tuple[str, list[str], int]]:
    """(module, imported names, line) for every eaglelint import in the file, late ones included,
    `if TYPE_CHECKING:` ones left out unless `type_only`."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out = []
    typing_only = set() if type_only else {
        id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
        and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # a type-only import is no run-time dependency (import-linter's exclude_type_checking_imports)
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == "eaglelint" or target.startswith("eaglelint."):
                names = [a.name for a in node.names]
                # `from eaglelint.fix import plan` imports the module eaglelint.fix.plan
                sub = [f"{target}.{n}" for n in names if (PACKAGE.parent / f"{target}.{n}".replace(".", "/")).
                       with_suffix(".py").is_file()]
                for module in sub:
                    out.append((module, [], node.lineno))
                if not sub:
                    out.append((target, names, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("eaglelint")]
    return out


def graph(type_only: bool = False) -> dict[str, list[tuple[str, list[str], int]]]:
    return {module_name(p): imports_of(p, type_only) for p in sorted(PACKAGE.rglob("*.py"))}


def test_layers_import_one_way():
    upward = [
        f"{module}:{line} imports {target} ({LAYERS[layer_of(target)][0]} is above {LAYERS[layer_of(module)][0]})"
        for module, edges in graph().items() for target, _, line in edges
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


def test_no_import_cycles():
    edges = {m: {t for t, _, _ in e if t != m} for m, e in graph().items()}
    for module in edges:  # a package's own __init__ is not a dependency of its modules here
        edges[module] = {t for t in edges[module] if t in edges and not module.startswith(t + ".")}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_no_private_names_imported_across_modules():
    borrowed = [f"{module}:{line} imports {name} from {target}"
                for module, edges in graph().items() for target, names, line in edges
                for name in names if name.startswith("_") and not name.startswith("__")]
    assert borrowed == []


ANALYSIS = "eaglelint.analysis"
# The analysis's rooms, lowest first: a module may import from its own room and the rooms below
# it, type-only imports included (their direction is the design's). analysis/__init__.py is in
# none: it wires them, installing what a higher room gives a lower one as data (the engines'
# call hooks, the read through which SGLang hands a draft its target's hidden states, the
# layout of a summary as cache data).
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("syntax", ("syntax",)),  # plain Python syntax, one file at a time: knows no engine
    ("store", ("store",)),  # the summary cache and its codec
    ("python", ("python",)),  # Python's semantics over the project: summaries, resolution, presence
    ("capture", ("capture",)),  # what both engines share: the capture chain's vocabulary
    ("engines", ("sglang", "vllm")),  # each engine's knowledge; tested apart: never each other
]
ENGINES = ("sglang", "vllm")


def room_of(module: str) -> int | None:
    """The room of an analysis module (None: the package itself, or outside the analysis)."""
    parts = module.split(".")
    if parts[:2] != ANALYSIS.split(".") or len(parts) < 3:
        return None
    found = [i for i, (_, packages) in enumerate(ROOMS) if parts[2] in packages]
    assert len(found) == 1, f"{module} is in {len(found)} rooms: give its folder one in ROOMS"
    return found[0]


def analysis_modules() -> list[str]:
    return [m for m in graph() if m.startswith(ANALYSIS + ".")]


def test_every_analysis_module_is_in_exactly_one_room():
    assert analysis_modules()
    assert {m: room_of(m) for m in analysis_modules() if room_of(m) is None} == {}
    # a module left at the top of analysis/ would be a room of its own: only the wiring is there
    assert {p.name for p in (PACKAGE / "analysis").glob("*.py")} == {"__init__.py"}


def room_name(module: str) -> str:
    room = room_of(module)
    return "the wiring (analysis/__init__.py)" if room is None else ROOMS[room][0]


def test_analysis_rooms_import_only_their_own_and_lower_rooms():
    edges = graph(type_only=True)
    upward = [f"{module}:{line} imports {target} ({room_name(target)} is above {room_name(module)})"
              for module in analysis_modules() for target, _, line in edges[module]
              if target == ANALYSIS or (room_of(target) or 0) > (room_of(module) or 0)]
    assert upward == []


def test_the_engine_rooms_never_import_each_other():
    edges = graph(type_only=True)
    crossed = [f"{module}:{line} imports {target}" for module in analysis_modules()
               for target, _, line in edges[module] for here, there in (ENGINES, ENGINES[::-1])
               if module.startswith(f"{ANALYSIS}.{here}.") and
               (target == f"{ANALYSIS}.{there}" or target.startswith(f"{ANALYSIS}.{there}."))]
    assert crossed == []


def test_the_core_imports_no_engine_layer():
    """Nothing in the rooms below the engines' (syntax, store, python, capture), nor anything
    it imports, type-only imports included, reaches an engine's room: a third engine, or an
    engine's new idiom, is a hook of its own, and the core is not edited for it."""
    edges = {m: [(t, line) for t, _, line in e] for m, e in graph(type_only=True).items()}
    engines = len(ROOMS) - 1
    core = [m for m in analysis_modules() if room_of(m) < engines]
    assert core and any(room_of(m) == engines for m in analysis_modules())
    reached: dict[str, str] = {m: m for m in core}  # module -> the import that reached it
    todo = list(core)
    while todo:
        module = todo.pop()
        for target, line in edges.get(module, []):
            if target not in reached:
                reached[target] = f"{module}:{line}"
                todo.append(target)
    assert {m: where for m, where in reached.items() if room_of(m) == engines or m == ANALYSIS} == {}


CODE = re.compile(r"EGL\d{3}")
# codes that no rule family reports: each is declared once, where it is made
OUTSIDE_FAMILIES = {INTERNAL_ERROR: "eaglelint.findings", UNUSED_SUPPRESSION: "eaglelint.pipeline.suppressions"}


def test_every_code_in_codes_toml_has_exactly_one_owner():
    owners: dict[str, list[str]] = {}
    for family in FAMILIES:
        for code in family.CODES:
            owners.setdefault(code, []).append(family.__name__)
    for code, module in OUTSIDE_FAMILIES.items():
        owners.setdefault(code, []).append(module)
    assert {c: m for c, m in owners.items() if len(m) != 1} == {}
    assert set(owners) == set(load_codes())


def test_rule_codes_are_string_literals_only_where_they_are_declared():
    owner = {code: family.__name__ for family in FAMILIES for code in family.CODES} | OUTSIDE_FAMILIES
    stray = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value) \
                    and owner.get(node.value) != module:
                stray.append(f"{module}:{node.lineno} {node.value}")
    assert stray == []


def test_every_code_is_expected_by_a_fixture():
    """A rule is added with a fixture that shows it: some `# expect:` line names each code."""
    expected = {code for path in FIXTURES.rglob("*.py") for line in path.read_text(errors="replace").splitlines()
                if "# expect:" in line for code in CODE.findall(line.split("# expect:", 1)[1])}
    assert set(load_codes()) - expected == set()


# The calls that read or parse a file. Outside analysis/syntax/sources.py (the guarded reader) and
# analysis/python/project.py (the one owner of a scanned file's bytes and trees), a module may make
# one only for a file that is not a scanned source, or while its move onto Project is pending.
READERS = {"read_bytes", "read_source", "read_text", "parse_source", "open"}
READS_ALLOWED: dict[str, set[str]] = {
    "eaglelint.analysis.syntax.sources": {"read_bytes", "open"},  # the guarded reader itself (os.open)
    "eaglelint.analysis.python.project": {"read_bytes", "parse_source"},  # the owner: reads and parses, once
    "eaglelint.analysis.store.cache": {"read_bytes", "open"},  # cache entries, and eaglelint's own code for its tag
    "eaglelint.analysis.sglang.roles": {"read_source"},  # configs/model_config.py: engine config (see docstring)
    "eaglelint.drift.scan": {"read_source", "parse_source"},  # SGLang's engine files, not the checked tree
    "eaglelint.drift.compare": {"read_source", "parse_source"},  # sglang/_version.py: engine metadata
    "eaglelint.config": {"read_text"},  # .eaglelint.toml / pyproject.toml
    "eaglelint.packs": {"read_text"},  # rules/*.toml shipped with eaglelint
    "eaglelint.pipeline.baseline": {"read_text"},  # the baseline JSON
    "eaglelint.cli.support": {"read_text"},  # a checkpoint's config.json (support --config), not a scanned source
    "eaglelint.output.formats": {"open"},  # --output-file, written
    "eaglelint.pylint_plugin": {"open"},  # pylint's checker hook `self.open()`, no file
    # without a project (the pylint plugin, a library caller), these read for themselves
    "eaglelint.pipeline.suppressions": {"read_source"},
    # a fix edits the file as it is now (Project.current_source), and re-reads it just
    # before writing, to refuse one changed since; parsed once per edited file
    "eaglelint.fix.edits": {"read_source", "parse_source"},
    "eaglelint.fix.plan": {"read_bytes"},
}


def reader_calls(path: Path) -> set[str]:
    """Names of the file-reading calls in a module: `read_source(...)`, `p.read_bytes()`, `open(...)`."""
    out = set()
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in READERS:
                out.add(name)
    return out


def test_only_the_project_reads_scanned_files():
    """Every read of a scanned file goes through analysis/python/project.py's Project (read once,
    through the FIFO and size guard, digest noted, parsed once): a module that reads or
    parses a file itself fails here, unless the allow-list above says why it may."""
    found = {module_name(p): reader_calls(p) for p in sorted(PACKAGE.rglob("*.py"))}
    unexpected = {m: sorted(calls - READS_ALLOWED.get(m, set())) for m, calls in found.items()
                  if calls - READS_ALLOWED.get(m, set())}
    assert not unexpected, f"read through analysis.project.Project instead: {unexpected}"
    stale = {m: sorted(names - found.get(m, set())) for m, names in READS_ALLOWED.items()
             if names - found.get(m, set())}
    assert not stale, f"allowed reads no longer made (remove them from READS_ALLOWED): {stale}"


def test_the_top_of_the_package_holds_only_shared_data_and_entry_points():
    assert {p.name for p in PACKAGE.glob("*.py")} == TOP_LEVEL
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        "analysis", "checks", "fix", "output", "drift", "pipeline", "cli"}
