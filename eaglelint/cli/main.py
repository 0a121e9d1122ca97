"""The command line: a thin shell over discover -> check -> report | fix.

Exit codes, as ruff and pylint users expect: 0 clean, 1 findings, 2 usage or
internal error. A user mistake is a one-line message, never a traceback.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import __version__
from ..config import ConfigError
from ..findings import display_path
from ..fix.styles import STYLES
from ..output.formats import FORMATS, open_output, write_report
from ..output.report import progress_bar, wants_progress
from .cache import clean_cmd
from .info import interfaces_cmd, rule_cmd, rules_cmd
from .options import UsageProblem, common, make_project, relinter, run_lint, settings_finder, target_paths
from .support import support_cmd

if TYPE_CHECKING:
    from rich.console import Console



def rich_console(stderr: bool = False) -> Console:
    """rich's console, for the messages of a fix (the report is output.py's). Imported here,
    never at start-up: a warm `check` that only reports takes a tenth of a second, and
    loading rich would be a good part of it."""
    from rich.console import Console

    return Console(soft_wrap=True, stderr=stderr)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="eaglelint")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Find (and fix) SGLang model wrappers that break speculative decoding.

    \b
    Examples:
      eaglelint check python/sglang/srt/models
      eaglelint fix python/sglang/srt/models --write
      eaglelint rule EGL001
    """
    ctx.obj = {"debug": debug}


@cli.command()
@common
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="concise: one line per finding; sarif: SARIF 2.1.0 for code scanning; github: workflow "
                   "annotations; junit: JUnit XML.")
@click.option("--output-file", "-o", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Write the report to FILE instead of standard output.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the findings.")
@click.option("--statistics", is_flag=True, help="Print only the counts per rule code.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--report-unused-suppressions", is_flag=True, default=None,
              help="Report `# noqa: EGL...` / `# eaglelint: ignore[...]` comments that suppress nothing (EGL900).")
@click.option("--fix", "apply_fixes", is_flag=True, help="Write the fixes first (as `eaglelint fix --write`), "
              "then report what is left.")
@click.option("--show-fixes", is_flag=True, help="With --fix, list each member added.")
@click.option("--add-noqa", is_flag=True, help="Add a `# noqa: CODE -- REASON` comment for every finding, "
              "in the given files.")
@click.option("--noqa-reason", metavar="TEXT", help="The REASON --add-noqa writes (default: existing gap, "
              "recorded by eaglelint check --add-noqa).")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Do not report the findings FILE holds (see --write-baseline).")
@click.option("--write-baseline", is_flag=True, help="Record every current finding in the --baseline FILE.")
def check(output_format, output_file, quiet, statistics, exit_zero, report_unused_suppressions, apply_fixes,
          show_fixes, add_noqa, noqa_reason, baseline, write_baseline, paths, **opts):
    """Report wrapper classes that lack interface methods their wrapped model has.

    PATH is a file or a folder (searched for *.py). With no PATH, this checkout's
    models folder (python/sglang/srt/models, sglang/srt/models, or srt/models here, or
    in a folder above up to the git work tree's root) is checked, else that of the
    installed sglang package (found, never imported); the tree checked is named on
    stderr. Given files (as pre-commit passes them), wrappers in other files of the
    same models folder that depend on them are checked too, each with the reason.

    \b
    Examples:
      eaglelint check python/sglang/srt/models
      eaglelint check kimi_k25.py --output-format json
      eaglelint check --output-format sarif -o eaglelint.sarif python/sglang/srt/models
    """
    if write_baseline and baseline is None:
        raise UsageProblem("--write-baseline needs --baseline FILE")
    if write_baseline:  # the fixer, the baseline writer and SARIF's fixes load only where a run uses them
        from ..pipeline.baseline import write as write_baseline_file
    if apply_fixes or add_noqa or write_baseline or output_format == "sarif":
        from ..fix.run import fix_until_stable, plan, plural, print_fixed, print_not_converged
    if write_baseline and not baseline.exists():
        write_baseline_file(baseline, [])  # the config may name it too: an empty one holds nothing yet
    finder = settings_finder(opts, report_unused_suppressions=report_unused_suppressions, baseline=baseline)
    targets = target_paths(paths, installed=not (apply_fixes or add_noqa))
    progress = progress_bar if wants_progress(quiet, output_format) and not output_file else None
    project = make_project(opts)
    result = run_lint(targets, finder, project, progress, opts["jobs"])
    if write_baseline:
        count = write_baseline_file(baseline, result.findings + result.baselined)
        click.echo(f"Wrote {plural(count, 'finding')} to the baseline {baseline}.", err=True)
        sys.exit(0)
    if add_noqa:
        from ..fix.noqa import DEFAULT_REASON, add_noqa_comments

        reason = DEFAULT_REASON if noqa_reason is None else noqa_reason.strip()
        added, files, failed = add_noqa_comments(result.findings, targets, reason, opts["allow_fetched"])
        for problem in failed:
            click.echo(problem, err=True)
        click.echo(f"Added {plural(added, 'noqa directive')} in {plural(files, 'file')}.")
        sys.exit(1 if failed else 0)
    if apply_fixes:
        console = rich_console(stderr=output_format != "text" or bool(output_file))
        done = fix_until_stable(result, project, relinter(targets, finder, opts), targets, console, list(paths),
                                allow_fetched=opts["allow_fetched"])
        print_fixed(console, done.written, show_fixes, done.passes)
        print_not_converged(console, done)
        result, project = done.result, done.project
    # SARIF carries each result's fix: what `fix --write` would write now (never written here)
    fix_plan = plan(result, project, targets) if output_format == "sarif" and not statistics else None
    with open_output(output_file) as out:
        write_report(result.findings, output_format, out, quiet=quiet, statistics_only=statistics,
                     fix_plan=fix_plan)
    sys.exit(0 if exit_zero or not result.failing else 1)


@cli.command()
@common
@click.option("--write", is_flag=True, help="Apply the fixes to the files.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Only print a unified diff (the default without --write); exit 1 if it is not empty.")
@click.option("--show-fixes", is_flag=True, help="With --write, list each member added.")
@click.option("--style", type=click.Choice(STYLES), default=None,
              help="raise (default): a plain call where every class the wrapper may hold has the member, "
                   "else a check that raises AttributeError naming the wrapper, member and held class; "
                   "plain: always a plain call; guard: skips the call silently when the held model lacks "
                   "the method (masks a missing capture hook). Overrides [tool.eaglelint.fix].")
def fix(write, show_diff, show_fixes, style, paths, **opts):
    """Write delegating methods for every fixable finding.

    Without --write nothing changes, a unified diff is printed, and the exit code is
    1 when there is something to change. Files are written only if the result parses,
    atomically, keeping encoding, line endings and indentation; the rest of each file
    is left byte-for-byte as it was. With no PATH, only this checkout's models folder
    is fixed, never the installed sglang package.

    \b
    Examples:
      eaglelint fix python/sglang/srt/models            # show the diff
      eaglelint fix python/sglang/srt/models --write
    """
    if write and show_diff:
        raise UsageProblem("--write and --diff exclude each other")
    from ..fix.run import (
        fix_summary,
        fix_until_stable,
        plan,
        print_fix_commands,
        print_fixed,
        print_left,
        print_not_converged,
        written_by_file,
    )
    finder = settings_finder(opts, style=style)
    targets = target_paths(paths)
    project = make_project(opts)
    result = run_lint(targets, finder, project, jobs=opts["jobs"])
    console = rich_console(stderr=not write)
    if not write:
        fix_plan = plan(result, project, targets)
        for file_fix in fix_plan.files:
            sys.stdout.write(file_fix.diff(display_path(file_fix.path)))
        console.print(f"{fix_summary('Would add', written_by_file(fix_plan.files))}; run with --write to apply.",
                      highlight=False)
        print_left(console, fix_plan.left)
        sys.exit(1 if fix_plan.files else 0)
    done = fix_until_stable(result, project, relinter(targets, finder, opts), targets, console, list(paths),
                            allow_fetched=opts["allow_fetched"])
    print_fixed(console, done.written, show_fixes, done.passes)
    print_left(console, done.left)
    print_fix_commands(console, [f for f, _ in done.left if f.included_because])  # dependents, not given
    print_not_converged(console, done)
    sys.exit(1 if done.result.failing or not done.converged else 0)




for command in (rules_cmd, rule_cmd, interfaces_cmd, clean_cmd, support_cmd):
    cli.add_command(command)


def main() -> None:
    # A run builds many long-lived objects (syntax trees, summaries) and few cycles: the
    # collector would only re-scan them, about a tenth of a cold check's CPU time with the
    # default thresholds, and still 4-5% with mypy's (a collection every 100,000 allocations).
    # So it is off while the command runs: the cycles a run leaves (its project and resolver)
    # go with the process, and a fix run collects each pass's before the next (fix/run.py).
    # Only for the command line; a program that calls main() gets its collector back.
    debug = "--debug" in sys.argv[1:]
    collecting = gc.isenabled()
    gc.disable()
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except ConfigError as exc:  # a baseline or noqa comment that cannot be written: one line
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except (KeyboardInterrupt, BrokenPipeError):
        sys.exit(2)
    except SystemExit:
        raise
    except Exception as exc:
        if debug:
            raise
        click.echo(f"eaglelint: internal error: {type(exc).__name__}: {exc} "
                   "(run with --debug for the traceback)", err=True)
        sys.exit(2)
    finally:
        if collecting:
            gc.enable()


def entry() -> None:
    """The command line's own entry point (the `eaglelint` console script, `python -m
    eaglelint`): `main()`, then the process ends without freeing, one by one, the syntax trees
    and summaries a run leaves behind, a tenth of a cold check's time (as mypy leaves). Output is
    flushed first; nothing else waits for the interpreter's exit (no atexit handler, no open
    file, workers joined). `main()` stays the one a program calls, which returns."""
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # its reader is gone (a closed pipe): as main() ends on one
            code = 2
    os._exit(code)
