"""Benchmark: `eaglelint check` on a real SGLang models tree against the floor, in one run.

The floor is reading and `ast.parse`-ing every .py file of the tree: any linter that
looks at every file pays at least that. Figures are medians of several runs, and
ratios, so they compare across machines. Usage:

    python bench/bench_check.py [--version 0.5.23] [--runs 7]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from fetch_sglang import models_dir

from eaglelint.checker import CheckOptions, check_files
from eaglelint.discover import discover
from eaglelint.interfaces import select_interfaces


def floor(root: Path) -> None:
    for path in sorted(root.rglob("*.py")):
        ast.parse(path.read_bytes(), filename=str(path))


def eaglelint_cold(root: Path) -> int:
    files = discover([root]).files
    return len(check_files(files, CheckOptions(tuple(select_interfaces(None)))).findings)


def median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli_peak_rss_mb(root: Path) -> float:
    code = (f"import resource, sys; from eaglelint.cli import main; sys.argv=['eaglelint','check','-q',{str(root)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.23")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    root = models_dir(args.version)
    n_files = len(list(root.rglob("*.py")))
    base = median_seconds(lambda: floor(root), args.runs)
    cold = median_seconds(lambda: eaglelint_cold(root), args.runs)
    rss = cli_peak_rss_mb(root)
    print(f"SGLang {args.version} models tree: {n_files} files, median of {args.runs} runs")
    print(f"{'measure':<34}{'seconds':>10}{'ratio':>10}")
    print(f"{'floor: read + ast.parse every file':<34}{base:>10.3f}{1.0:>10.2f}")
    print(f"{'eaglelint check, cold (in-process)':<34}{cold:>10.3f}{cold / base:>10.2f}")
    print(f"peak RSS of `eaglelint check` (whole process): {rss:.0f} MB")


if __name__ == "__main__":
    main()
