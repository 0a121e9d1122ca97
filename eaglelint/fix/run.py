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
from typing import TYPE_CHECKING

from ..analysis.project import Project
from ..findings import Finding, display_path
from ..lint import LintResult

if TYPE_CHECKING:  # fixing loads the fixer and rich; a check that only reports loads neither
    from rich.console import Console

    from .edits import FileFix, FixPlan

PRE_COMMIT_HOOK = "eaglelint-fix"


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


def write_plan(fix_plan: FixPlan, console: Console, named: list[Path]) -> list[FileFix]:
    """Write every file of the plan; a file that cannot be written is named, the rest go on.
    `named` are the paths the user gave: an installed tree none of them names is not written."""
    from .edits import FixError
    from .plan import write_fix

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
            console.print(f"  {display_path(f.path)}:{f.line}:{f.column} {f.code}{where}: {reason}",
                          highlight=False)


def fix_commands(findings: list[Finding]) -> list[str]:
    """The commands that fix these findings: the CLI's, and pre-commit's for a fork that
    has only the hook; empty when none is fixable."""
    files = list(dict.fromkeys(display_path(f.path) for f in findings if f.fixable))
    if not files:
        return []
    named = " ".join(shlex.quote(p) for p in files)
    return [f"eaglelint fix --write {named}",
            f"pre-commit run {PRE_COMMIT_HOOK} --hook-stage manual --files {named}"]


def fix_command_lines(findings: list[Finding]) -> list[str]:
    """What a report prints after its findings: how to fix them (nothing when none is fixable)."""
    commands = fix_commands(findings)
    if not commands:
        return []
    cli, hook = commands
    return ["Fix them with:", f"  {cli}",
            "or, with only pre-commit (the files must be named with --files, or staged with `git add`: "
            "without --files, pre-commit takes the staged files only):", f"  {hook}"]


def print_fix_commands(console: Console, findings: list[Finding]) -> None:
    for line in fix_command_lines(findings):
        console.print(line, highlight=False, markup=False)
