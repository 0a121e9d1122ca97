"""Fixes as the command line applies them (`fix --write`, `check --fix`), and the commands
that fix what a run found.

Why the commands are spelled out: in a fork, pre-commit hands eaglelint the changed
files, and the findings it reports may be in files that were not given (a wrapper
whose wrapped class changed). `eaglelint-fix` writes only the files it is given, so
the person whose commit was rejected needs the exact command naming every file to
fix, in a form that works with only pre-commit installed. Without `--files`,
`pre-commit run` takes the staged files only: after a rejected `git commit -a`
nothing is staged, and the hook would say "no files to check".

Why a write repeats: a fix can make the next one possible. A wrapper whose held model
is itself a wrapper (Qwen3-Omni holding a Qwen3-VL thinker) lacks a member only once
the held one has it, so its finding appears after the held class is fixed. As ruff
does, `fix --write` and `check --fix` plan again on what they wrote until a pass
writes nothing, at most MAX_PASSES times, and say so if that bound is reached.

Every fix eaglelint writes is safe in ruff's sense: it only adds a member the
wrapper lacks (delegating to the wrapped model, raising a clear error where it
cannot) or, for vLLM, a marker base; no existing line changes meaning. So there is
no `--unsafe-fixes`.
"""

from __future__ import annotations

import gc
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.python.project import Project
from ..findings import WRITTEN_KINDS, Finding, Written, display_path
from ..pipeline.lint import LintResult
from .write_targets import fetched_refusal, fetched_trees

if TYPE_CHECKING:  # fixing loads the fixer and rich; a check that only reports loads neither
    from rich.console import Console

    from .edits import FileFix, FixPlan

PRE_COMMIT_HOOK = "eaglelint-fix"
MAX_PASSES = 100  # ruff's bound on fix iterations
CHECKOUT_MODELS = "python/sglang/srt/models"  # the models folder in SGLang's repository


@dataclass
class FixRun:
    """What `fix --write` did: every file it wrote (a file once per pass that wrote it), the
    run that found nothing more to write (its findings are what is left), that run's plan
    of what stays unfixed, the passes that wrote something, and whether it settled."""

    result: LintResult
    project: Project
    written: list[FileFix] = field(default_factory=list)
    left: list[tuple[Finding, str]] = field(default_factory=list)
    passes: int = 0
    converged: bool = True


def plan(result: LintResult, project: Project, roots) -> FixPlan:
    """One plan of the fixes the findings carry (each planned in the style its file's own
    configuration asks for), none outside `roots`; the files of one style together, as
    configurations group them."""
    from .edits import FixPlan
    from .plan import plan_fixes

    out = FixPlan()
    for style in sorted(set(result.style_of.values())):
        findings = [f for f in result.findings if result.style_of.get(f.path) == style]
        part = plan_fixes(findings, project, roots)
        out.files += part.files
        out.left += part.left
    return out


def write_plan(fix_plan: FixPlan, console: Console, named: list[Path], allow_fetched: bool = False) -> list[FileFix]:
    """Write every file of the plan; a file that cannot be written is named, the rest go on.
    `named` are the paths the user gave: an installed tree none of them names is not written,
    nor a fetched release tree unless `allow_fetched`."""
    from .edits import FixError
    from .plan import write_fix

    written = []
    refused: dict[str, list[FileFix]] = {}  # the files of a fetched release: one line for them all
    for file_fix in fix_plan.files:
        refusal = None if allow_fetched else fetched_refusal(file_fix.path)
        if refusal:
            refused.setdefault(refusal, []).append(file_fix)
            continue
        try:
            write_fix(file_fix, named, allow_fetched)
            written.append(file_fix)
        except FixError as exc:
            console.print(f"[red]not written[/] {display_path(file_fix.path)}: {exc}", highlight=False)
    for refusal, files in refused.items():
        console.print(f"[red]not written[/] {plural(len(files), 'file')}: {refusal}", highlight=False)
    return written


def fix_until_stable(result: LintResult, project: Project, relint: Callable[[], tuple[LintResult, Project]],
                     roots: list[Path], console: Console, named: list[Path], max_passes: int | None = None,
                     allow_fetched: bool = False) -> FixRun:
    """Write the fixes `result` carries, check again and write what that finds, until a pass
    writes nothing. A file that could not be written is named once and not tried again (it
    would fail the same way); what it would have fixed stays among the findings. After
    `max_passes` (MAX_PASSES) passes that each wrote something, it stops unsettled."""
    from .edits import FixPlan

    bound = MAX_PASSES if max_passes is None else max_passes
    run = FixRun(result=result, project=project)
    refused: set[Path] = set()
    while True:
        fix_plan = plan(run.result, run.project, roots)
        todo = [f for f in fix_plan.files if f.path not in refused]
        run.left = fix_plan.left
        if not todo:
            return run
        if run.passes == bound:
            run.converged = False
            return run
        done = write_plan(FixPlan(todo), console, named, allow_fetched)
        refused.update(f.path for f in todo if all(f is not d for d in done))
        if not done:
            return run
        run.written += done
        run.passes += 1
        run.result, run.project = relint()
        if not gc.isenabled():  # the command line runs without the collector (cli/main.py): the
            gc.collect()  # pass before this one left its project, a cycle, to be freed here


def print_not_converged(console: Console, run: FixRun) -> None:
    if not run.converged:
        console.print(f"Failed to converge after {plural(run.passes, 'pass')}: each pass found more to fix. "
                      "What was written parses; this is a bug in eaglelint, please report it with the files.",
                      highlight=False, markup=False)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'es' if word.endswith('s') else 's'}" if n != 1 else f"{n} {word}"


def written_by_file(written: list[FileFix]) -> dict[Path, list[Written]]:
    """Each file written and what was written into it, each once: a file written by several
    passes is one file, a member added or a method changed counted once."""
    out: dict[Path, dict[Written, None]] = {}
    for file_fix in written:
        out.setdefault(Path(os.path.abspath(file_fix.path)), {}).update(dict.fromkeys(file_fix.writes))
    return {path: list(writes) for path, writes in out.items()}


def fix_summary(verb: str, by_file: dict[Path, list[Written]]) -> str:
    """`Added 3 methods and edited 2 methods in 2 files`, `verb` the first word ("Added",
    "Would add"): what was written counted by kind. Methods added are always counted (`Added 0
    methods` when nothing was written); base classes added and methods edited when some were."""
    writes = [w for found in by_file.values() for w in found]
    methods, bases, edits = (sum(w.kind == kind for w in writes) for kind in WRITTEN_KINDS)
    text = f"{verb} {plural(methods, 'method')}"
    if bases:
        text += f" and {plural(bases, 'base class')}{',' if edits else ''}"
    if edits:
        text += f" and {'edited' if verb == 'Added' else 'edit'} {plural(edits, 'method')}{',' if bases else ''}"
    return f"{text} in {plural(len(by_file), 'file')}"


def print_fixed(console: Console, written: list[FileFix], show: bool, passes: int = 1) -> None:
    """`Added N methods in M files.` (what else was written, by fix_summary; in how many passes,
    when a fix led to another), and with --show-fixes what was written where."""
    by_file = written_by_file(written)
    repeated = f", in {passes} passes" if passes > 1 else ""
    console.print(f"{fix_summary('Added', by_file)}{repeated}.", highlight=False)
    if show:
        for path, writes in by_file.items():
            console.print(f"  {display_path(path)}: {', '.join(_shown(w) for w in writes)}", highlight=False)


def _shown(written: Written) -> str:
    """One entry of --show-fixes: `C.m` added, `C (base B)` a base added, `C.forward (edited)`."""
    if written.kind == "base":
        return f"{written.class_name} (base {written.name})"
    return f"{written.class_name}.{written.name}{' (edited)' if written.kind == 'edit' else ''}"


def print_left(console: Console, left: list[tuple[Finding, str]]) -> None:
    if left:
        console.print(f"{plural(len(left), 'finding')} left without an automatic fix:")
        for f, reason in left:
            where = f" {f.class_name}{'.' + f.method if f.method else ''}" if f.class_name else ""
            console.print(f"  {display_path(f.path)}:{f.line}:{f.column} {f.code}{where}: {reason}",
                          highlight=False)


def fix_commands(findings: list[Finding], trees: dict[str, Path | None]) -> list[str]:
    """The commands that fix these findings: the CLI's, and pre-commit's for a fork that
    has only the hook; empty when none is fixable. Files of a fetched release (`trees`:
    `fetched_trees` of the fixable findings' paths) are left out: fix refuses them
    (fix/write_targets.py)."""
    fixable = [f for f in findings if f.fixable]
    files = list(dict.fromkeys(display_path(f.path) for f in fixable if trees[str(f.path)] is None))
    if not files:
        return []
    named = " ".join(shlex.quote(p) for p in files)
    return [f"eaglelint fix --write {named}",
            f"pre-commit run {PRE_COMMIT_HOOK} --hook-stage manual --files {named}"]


def fix_command_lines(findings: list[Finding]) -> list[str]:
    """What a report prints after its findings: how to fix them (nothing when none is
    fixable); for a fetched release, what to do next with one's own code instead."""
    lines = []
    trees = fetched_trees(f.path for f in findings if f.fixable)
    commands = fix_commands(findings, trees)
    if commands:
        cli, hook = commands
        lines += ["Fix them with:", f"  {cli}",
                  "or, with only pre-commit (the files must be named with --files, or staged with `git add`: "
                  "without --files, pre-commit takes the staged files only):", f"  {hook}"]
    fetched = sorted({str(t) for t in trees.values() if t is not None})
    if fetched:
        lines += [f"{', '.join(fetched)}: a release fetched for the demo and the tests; fix leaves it as "
                  "released. Next, in your own SGLang checkout or fork:",
                  f"  eaglelint check {CHECKOUT_MODELS}",
                  f"  eaglelint fix --write {CHECKOUT_MODELS}",
                  "and add the `eaglelint` pre-commit hook (README: \"Use in an SGLang fork\")."]
    return lines


def print_fix_commands(console: Console, findings: list[Finding]) -> None:
    for line in fix_command_lines(findings):
        console.print(line, highlight=False, markup=False)
