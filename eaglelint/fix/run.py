"""Fixes as the command line applies them (`fix --write`, `check --fix`), and the commands
that fix what a run found.

Why the commands are spelled out: in a fork, pre-commit hands eaglelint the changed
files, and the findings it reports may be in files that were not given (a wrapper
whose wrapped class changed). `eaglelint-fix` writes only the files it is given, so
the person whose commit was rejected needs the exact command naming every file to
fix, in a form that works with only pre-commit installed. Without `--files`,
`pre-commit run` takes the staged files only: after a rejected `git commit -a`
nothing is staged, and the hook would say "no files to check".

Every fix eaglelint writes is safe in ruff's sense: it only adds a member the
wrapper lacks (delegating to the wrapped model, raising a clear error where it
cannot) or, for vLLM, a marker base; no existing line changes meaning. So there is
no `--unsafe-fixes`.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Console

from ..analysis.project import Project
from ..findings import Finding, display_path
from ..lint import LintResult
from .edits import FileFix, FixError, FixPlan
from .plan import plan_fixes, write_fix

PRE_COMMIT_HOOK = "eaglelint-fix"


def plan(result: LintResult, project: Project, roots) -> FixPlan:
    """One plan, each file fixed in the style its own configuration asks for, none outside `roots`."""
    out = FixPlan()
    for style in sorted(set(result.style_of.values())):
        findings = [f for f in result.findings if result.style_of.get(f.path) == style]
        part = plan_fixes(findings, project, style, roots)
        out.files += part.files
        out.left += part.left
    return out


def write_plan(fix_plan: FixPlan, console: Console, named: list[Path]) -> list[FileFix]:
    """Write every file of the plan; a file that cannot be written is named, the rest go on.
    `named` are the paths the user gave: an installed tree none of them names is not written."""
    written = []
    for file_fix in fix_plan.files:
        try:
            write_fix(file_fix, named)
            written.append(file_fix)
        except FixError as exc:
            console.print(f"[red]not written[/] {display_path(file_fix.path)}: {exc}", highlight=False)
    return written


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def print_fixed(console: Console, written: list[FileFix], show: bool) -> None:
    """`Added N methods in M files.`, and with --show-fixes what was added where."""
    methods = sum(len(f.added) for f in written)
    console.print(f"Added {plural(methods, 'method')} in {plural(len(written), 'file')}.", highlight=False)
    if show:
        for file_fix in written:
            added = ", ".join(f"{cls}.{member}" for cls, member in file_fix.added)
            console.print(f"  {display_path(file_fix.path)}: {added}", highlight=False)


def print_left(console: Console, left: list[tuple[Finding, str]]) -> None:
    if left:
        console.print(f"{plural(len(left), 'finding')} left without an automatic fix:")
        for f, reason in left:
            where = f" {f.class_name}{'.' + f.method if f.method else ''}" if f.class_name else ""
            console.print(f"  {f.path}:{f.line}:{f.column} {f.code}{where}: {reason}", highlight=False)


def fix_commands(findings: list[Finding]) -> list[str]:
    """The commands that fix these findings: the CLI's, and pre-commit's for a fork that
    has only the hook; empty when none is fixable."""
    files = list(dict.fromkeys(f.path for f in findings if f.fixable))
    if not files:
        return []
    named = " ".join(shlex.quote(p) for p in files)
    return [f"eaglelint fix --write {named}",
            f"pre-commit run {PRE_COMMIT_HOOK} --hook-stage manual --files {named}"]


def print_fix_commands(console: Console, findings: list[Finding]) -> None:
    commands = fix_commands(findings)
    if not commands:
        return
    cli, hook = commands
    console.print("Fix them with:", highlight=False)
    console.print(f"  {cli}", highlight=False, markup=False)
    console.print("or, with only pre-commit (the files must be named with --files, or staged with `git add`: "
                  "without --files, pre-commit takes the staged files only):", highlight=False)
    console.print(f"  {hook}", highlight=False, markup=False)
