"""Benchmark: `eaglelint check` on a real SGLang models tree against the floor, in one run.

The floor is reading and `ast.parse`-ing every .py file of the tree: any linter that
looks at every file pays at least that. Every figure is a median of several runs and
is printed with its ratio, so results compare across machines. Usage:

    python bench/bench_check.py [--version 0.5.23] [--runs 7]
    python bench/bench_check.py --warm-start [--runs 21]   # only the warm process and start-up
    python bench/bench_check.py --instructions              # instructions executed (valgrind), no timing

Measures, all on a private copy of the tree and a private cache folder:
  floor      read + ast.parse every file
  cold       eaglelint check, no cache (1 process, and --jobs 2)
  warm       cache filled, nothing changed (in this process, and as a whole `eaglelint
             check` process printing its plain report: start-up and imports included)
  one file   cache filled, kimi_k25.py edited and passed alone (as pre-commit does,
             with the files that depend on it)
  pylint     pylint --load-plugins eaglelint.pylint_plugin, where the plugin exists
  start-up   `python -c "import click, rich"`, timed in turn with the warm whole process:
             what any click + rich tool pays before its first line of work
and the peak RSS of a cold `eaglelint check` process. The floor and the cold check are
also timed as whole processes (a fresh interpreter each: start-up and imports
included), which is what a user or pre-commit waits for. eaglelint's own modules are
compiled to bytecode first and the processes may use it, as after `pip install`
(which compiles them); a PYTHONDONTWRITEBYTECODE environment would otherwise make
every process compile eaglelint from source again.

`--instructions` counts instead the instructions the floor and the cold check execute as
whole processes (valgrind's cachegrind, `--cache-sim=no`): a measure that does not drift with
the machine's load as the seconds do on a shared one, though an instruction is not a fixed
time (memory traffic is not counted).
"""

from __future__ import annotations

import argparse
import ast
import compileall
import gc
import importlib.util
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from fetch_sglang import models_dir

from eaglelint.analysis.python.project import RACY_NS, Project
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.pipeline.lint import SettingsFinder, lint


def floor(root: Path) -> None:
    for path in sorted(root.rglob("*.py")):
        ast.parse(path.read_bytes(), filename=str(path))


FLOOR_PROCESS = (
    "import ast, pathlib, sys\n"
    "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.py')):\n"
    "    ast.parse(p.read_bytes(), filename=str(p))\n"
)


def installed_env() -> dict[str, str]:
    """The environment of an installed eaglelint: its modules compiled to bytecode, and used."""
    import eaglelint

    compileall.compile_dir(str(Path(eaglelint.__file__).parent), quiet=1)
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def console_script() -> list[str]:
    """How a user starts eaglelint: the `eaglelint` script pip installed beside this interpreter
    (run by it), else `-m eaglelint`, which also loads runpy."""
    script = Path(sys.executable).parent / "eaglelint"
    return [str(script)] if script.is_file() else ["-m", "eaglelint"]


EAGLELINT = console_script()


def process(args: list[str], env: dict[str, str] | None = None) -> None:
    """One fresh interpreter: what a user waits for, start-up included."""
    subprocess.run([sys.executable, *args], capture_output=True, check=False, env=env)


def instructions(args: list[str], env: dict[str, str]) -> int:
    """Instructions one fresh interpreter executes, start-up included (valgrind cachegrind)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, *args], capture_output=True, text=True, check=False, env=env)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind gave no instruction count:\n{done.stderr[-2000:]}")
    return int(found[1].replace(",", ""))


def count_instructions(root: Path, env: dict[str, str]) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind on PATH")
    floor_count = instructions(["-c", FLOOR_PROCESS, str(root)], env)
    cold_count = instructions([*EAGLELINT, "check", "-q", "--no-cache", str(root)], env)
    print(f"{'measure (whole process, instructions executed)':<52}{'G instr':>9}{'x floor':>9}")
    for name, count in (("floor, whole process", floor_count),
                        ("cold, whole process (`eaglelint check --no-cache`)", cold_count)):
        print(f"{name:<52}{count / 1e9:>9.3f}{count / floor_count:>9.2f}")


def run_check(paths: list[Path], cache_dir: Path | None, jobs: int = 1) -> list:
    """The CLI's own pipeline (config ignored), dependents of given files included, with the
    cycle collector off as the command line runs it (cli/main.py `main`); what it leaves is
    collected, untimed, before the next measure (`median_seconds`, `side_by_side`)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        project = Project(SummaryCache(cache_dir) if cache_dir else None)
        return lint(paths, SettingsFinder(isolated=True), project, jobs=jobs).findings
    finally:
        if collecting:
            gc.enable()


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children: steadier than wall time on a
    machine that other jobs share."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def side_by_side(measures: dict[str, object], runs: int) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) seconds of each measure, run in turn within each round, so that
    the floor and the checks see the same load."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in measures}
    for _ in range(runs):
        for name, fn in measures.items():
            gc.collect()  # what the measure before left (a checked project is a cycle) is not this one's to free
            wall, cpu = time.perf_counter(), cpu_seconds()
            fn()
            times[name].append((time.perf_counter() - wall, cpu_seconds() - cpu))
    return {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for name, t in times.items()}


def median_seconds(fn, runs: int, before=lambda: None) -> float:
    times = []
    for _ in range(runs):
        before()
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peak_rss_mb(args: list[str]) -> float:
    code = ("import resource, sys\nfrom eaglelint.cli import main\nsys.argv = ['eaglelint', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False).stdout
    return int(out.strip().splitlines()[-1]) / 1024


WARM = "warm, whole process (`eaglelint check`, plain report)"
STARTUP = "start-up baseline (`python -c 'import click, rich'`)"


def warm_start(root: Path, cache_dir: Path, env: dict[str, str], runs: int) -> None:
    """The warm whole process and the bare click + rich start-up, in turn within each round."""
    warm_cmd = [*EAGLELINT, "check", "--cache-dir", str(cache_dir), str(root)]
    # the tree was copied a moment ago: a file's status is remembered only once RACY_NS has
    # passed since it was written (as git does); before that, every run reads every file,
    # which a user's tree, written earlier, does not make it do
    time.sleep(RACY_NS / 1e9)
    process(warm_cmd, env)  # fills the cache
    times = side_by_side({WARM: lambda: process(warm_cmd, env),
                          STARTUP: lambda: process(["-c", "import click, rich"], env)}, runs)
    print(f"{'measure':<60}{'seconds':>9}{'cpu s':>9}")
    for name, (wall, cpu) in times.items():
        print(f"{name:<60}{wall:>9.3f}{cpu:>9.3f}")
    print(f"warm whole process / start-up baseline: {times[WARM][0] / times[STARTUP][0]:.2f}x wall, "
          f"{times[WARM][1] / times[STARTUP][1]:.2f}x CPU (medians of {runs} alternating runs)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.23")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-pylint", action="store_true", help="skip the (slow) pylint row")
    parser.add_argument("--warm-start", action="store_true",
                        help="time only a warm whole `eaglelint check` process against the start-up baseline")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions of the floor and the cold check processes (valgrind), no timing")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eaglelint-bench-"))
    try:
        root = work / "sglang" / "srt" / "models"
        shutil.copytree(models_dir(args.version), root)
        cache_dir = work / "cache"
        kimi = root / "kimi_k25.py"
        original = kimi.read_bytes()
        edits = iter(range(10**6))

        def edit_kimi() -> None:
            kimi.write_bytes(original + f"\n# edit {next(edits)}\n".encode())

        env = installed_env()
        if args.warm_start:
            warm_start(root, cache_dir, env, args.runs)
            return
        if args.instructions:
            count_instructions(root, env)
            return
        paired = side_by_side({
            "floor: read + ast.parse every file": lambda: floor(root),
            "cold, 1 process": lambda: run_check([root], None),
            "floor, whole process": lambda: process(["-c", FLOOR_PROCESS, str(root)], env),
            "cold, whole process (`eaglelint check --no-cache`)":
                lambda: process([*EAGLELINT, "check", "-q", "--no-cache", str(root)], env),
            "cold, whole process, --jobs 2":
                lambda: process([*EAGLELINT, "check", "-q", "--no-cache", "--jobs", "2", str(root)], env),
        }, args.runs)
        cpu = {name: c for name, (_, c) in paired.items()}
        rows = [(name, wall) for name, (wall, _) in paired.items()]
        rows.append(("cold, --jobs 2", median_seconds(lambda: run_check([root], None, 2), args.runs)))
        cold_result = run_check([root], None)
        assert run_check([root], cache_dir) == cold_result  # fills the cache
        rows.append(("warm (cache filled, nothing changed)",
                     median_seconds(lambda: run_check([root], cache_dir), args.runs)))
        assert run_check([root], cache_dir) == cold_result
        warm_cmd = [*EAGLELINT, "check", "--cache-dir", str(cache_dir), str(root)]
        process(warm_cmd, env)  # this process's cache key differs from the CLI's (config, cwd): fill it
        startup = side_by_side({  # in turn, so that both see the same load
            WARM: lambda: process(warm_cmd, env),
            STARTUP:
                lambda: process(["-c", "import click, rich"], env),
        }, max(args.runs, 20))
        rows += [(name, wall) for name, (wall, _) in startup.items()]
        rows.append(("one file changed, passed alone",
                     median_seconds(lambda: run_check([kimi], cache_dir), args.runs, before=edit_kimi)))
        kimi.write_bytes(original)
        if not args.no_pylint and importlib.util.find_spec("eaglelint.pylint_plugin") and \
                importlib.util.find_spec("pylint"):
            cmd = [sys.executable, "-m", "pylint", "--load-plugins", "eaglelint.pylint_plugin", "--disable=all",
                   "--enable=eaglelint", str(root)]
            rows.append(("pylint + eaglelint plugin", median_seconds(
                lambda: subprocess.run(cmd, capture_output=True, check=False), max(1, args.runs // 3))))
        n_files = len(list(root.rglob("*.py")))
        cold = rows[1][1]
        print(f"SGLang {args.version} models tree: {n_files} files, {len(cold_result)} findings, "
              f"median of {args.runs} runs")
        print(f"{'measure':<52}{'seconds':>9}{'x floor':>9}{'x cold':>9}{'cpu s':>9}{'cpu x floor':>12}")
        for name, seconds in rows:
            floor_name = "floor, whole process" if "whole process" in name else rows[0][0]
            base_here = dict(rows)[floor_name]
            line = f"{name:<52}{seconds:>9.3f}{seconds / base_here:>9.2f}{seconds / cold:>9.2f}"
            if name in cpu:
                line += f"{cpu[name]:>9.3f}{cpu[name] / cpu[floor_name]:>12.2f}"
            print(line)
        print("(whole-process rows are compared with the whole-process floor; the five rows with CPU "
              "times ran in turn within each round)")
        warm_whole = dict(rows)[WARM]
        base = dict(rows)[STARTUP]
        print(f"warm whole process / start-up baseline: {warm_whole / base:.2f}x")
        rss = peak_rss_mb(["check", "-q", "--no-cache", str(root)])
        print(f"peak RSS of a cold `eaglelint check` process: {rss:.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
