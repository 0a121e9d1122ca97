"""Benchmark: what a pre-commit run costs when it is given one changed file, against
checking the whole models tree, in one run (SGLang release, cached).

"given + dependents" is what the pre-commit hook does: check the file and every
wrapper in the tree whose resolution reads it. Figures are medians of several cold
in-process runs (a fresh module index each time), and ratios. Usage:

    python bench/bench_dependents.py [--version 0.5.23] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from fetch_sglang import models_dir

from eaglelint.pipeline.lint import lint

CHANGED = ("deepseek_v2.py", "llama.py", "qwen2.py", "kimi_k25.py")


def median_seconds(fn, runs: int) -> tuple[float, int]:
    times, n = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        n = len(fn().findings)
        times.append(time.perf_counter() - start)
    return statistics.median(times), n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="0.5.23")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = models_dir(args.version)
    whole, n_whole = median_seconds(lambda: lint([root]), args.runs)
    print(f"SGLang {args.version} models tree: {len(list(root.rglob('*.py')))} files, median of {args.runs} runs")
    print(f"{'run':<44}{'seconds':>9}{'ratio':>8}{'findings':>10}")
    print(f"{'whole tree':<44}{whole:>9.3f}{1.0:>8.2f}{n_whole:>10}")
    for name in CHANGED:
        alone, n_alone = median_seconds(lambda n=name: lint([root / n], dependents=False), args.runs)
        deps, n_deps = median_seconds(lambda n=name: lint([root / n]), args.runs)
        print(f"{name + ' given, no dependents':<44}{alone:>9.3f}{alone / whole:>8.2f}{n_alone:>10}")
        print(f"{name + ' given + dependents':<44}{deps:>9.3f}{deps / whole:>8.2f}{n_deps:>10}")


if __name__ == "__main__":
    main()
