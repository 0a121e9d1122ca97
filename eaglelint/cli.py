"""The command line: a thin shell over discover -> check -> report | fix.

Exit codes, as ruff and pylint users expect: 0 clean, 1 findings, 2 usage or
internal error. A user mistake is a one-line message, never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from . import __version__
from .baseline import write as write_baseline_file
from .cache import SummaryCache, default_cache_dir
from .checker import display_path
from .config import ConfigError, check_attributes, check_codes, check_interfaces, check_severities, split_flag
from .delegation import STYLES
from .discover import checkout_models_dir, installed_models_dir
from .fix_run import plan, plural, print_fix_commands, print_fixed, print_left, write_plan
from .info_commands import interfaces_cmd, rule_cmd, rules_cmd
from .lint import LintResult, SettingsFinder, lint
from .modules import Project
from .noqa_writer import DEFAULT_REASON, add_noqa_comments
from .output import FORMATS, open_output, write_report
from .report import progress_bar, wants_progress


class UsageProblem(click.UsageError):
    """A mistake in how eaglelint was called (exit 2)."""


class ConfigProblem(click.ClickException):
    """A configuration file or value eaglelint cannot use: one line, no usage banner (exit 2)."""

    exit_code = 2


def _paths(paths: tuple[Path, ...], installed: bool = False) -> list[Path]:
    """The given paths; with none, this checkout's models folder, and the installed sglang
    package's only where `installed` (check reads it; fix must never write into it)."""
    if paths:
        return list(paths)
    found, which = checkout_models_dir(), "the checkout in the working directory"
    if found is None and installed:
        found, which = installed_models_dir(), "the installed sglang package; no checkout found here"
    if found is None:
        looked = "the installed sglang package, " if installed else ""
        raise UsageProblem(
            f"no PATH given and no SGLang models folder found (looked for {looked}python/sglang/srt/models, "
            "sglang/srt/models or srt/models from the working directory up); "
            "pass the folder or files, e.g. `eaglelint check sglang/srt/models`")
    click.echo(f"eaglelint: no PATH given; checking {display_path(found)} ({which})", err=True)
    return [found]


def _finder(opts: dict, **extra) -> SettingsFinder:
    """Settings from config files, with the flags that were given laid over them."""
    if opts["config"] and opts["isolated"]:
        raise UsageProblem("--config and --isolated exclude each other")
    try:
        overrides = {
            "select": _codes(opts["select"], "--select"),
            "ignore": _codes(opts["ignore"], "--ignore"),
            "extend_select": _codes(opts["extend_select"], "--extend-select"),
            "extend_ignore": _codes(opts["extend_ignore"], "--extend-ignore"),
            "fail_on": _checked(check_severities, opts["fail_on"], "--fail-on"),
            "exclude": split_flag(opts["exclude"]),
            "interfaces": _checked(check_interfaces, opts["interface"], "--interface"),
            "wrapper_attributes": _checked(check_attributes, opts["wrapper_attribute"], "--wrapper-attribute"),
            "dependents": opts["dependents"],
            **extra,
        }
        return SettingsFinder(overrides, opts["config"], opts["isolated"])
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None


def _codes(values, flag: str):
    return _checked(check_codes, values, flag)


def _checked(check, values, flag: str):
    split = split_flag(values)
    return None if split is None else check(split, flag)


def make_project(no_cache: bool, cache_dir: Path | None) -> Project:
    """The module index, with the persistent summary cache unless --no-cache or --debug
    (with --debug an internal error must recur, with its traceback, not come from the cache)."""
    ctx = click.get_current_context(silent=True)
    debug = bool(ctx and isinstance(ctx.obj, dict) and ctx.obj.get("debug"))
    if no_cache or debug:
        project = Project()
    else:
        project = Project(SummaryCache(cache_dir or default_cache_dir(), warn=lambda m: click.echo(m, err=True)))
    project.debug = debug
    return project


def run_lint(paths: list[Path], finder: SettingsFinder, project: Project, progress=None,
             jobs: int = 1) -> LintResult:
    try:
        result = lint(paths, finder, project, progress, jobs=jobs)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None
    if not result.files_checked and result.findings and all(f.code == "EGL999" for f in result.findings):
        raise UsageProblem("nothing to check: " + "; ".join(f"{f.path}: {f.message}" for f in result.findings))
    return result


COMMON = [
    click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
    click.option("--config", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
                 help="Read settings from FILE (a pyproject.toml with [tool.eaglelint], or a TOML file of "
                      "the same keys) instead of the closest config."),
    click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
    click.option("--interface", multiple=True, metavar="PACK[,PACK]",
                 help="Interface packs from rules/ to check (default: the default packs, EAGLE-3)."),
    click.option("--wrapper-attribute", multiple=True, metavar="NAME",
                 help="Attribute that holds the wrapped model (default: language_model)."),
    click.option("--select", multiple=True, metavar="CODE[,CODE]",
                 help="Only report these rule codes (a prefix such as EGL0, or ALL); replaces the config's."),
    click.option("--ignore", multiple=True, metavar="CODE[,CODE]",
                 help="Do not report these rule codes; replaces the config's ignore."),
    click.option("--extend-select", multiple=True, metavar="CODE[,CODE]",
                 help="Report these codes too, in addition to the config's select."),
    click.option("--extend-ignore", multiple=True, metavar="CODE[,CODE]",
                 help="Do not report these codes either, in addition to the config's ignore."),
    click.option("--fail-on", multiple=True, metavar="SEVERITY[,SEVERITY]",
                 help="Severities that make the exit code 1 (default: error,warning; info never fails)."),
    click.option("--exclude", multiple=True, metavar="GLOB[,GLOB]",
                 help="Skip files and folders matching these globs (replaces the config's exclude)."),
    click.option("--no-cache", is_flag=True, help="Do not read or write the summary cache."),
    click.option("--cache-dir", type=click.Path(path_type=Path), envvar="EAGLELINT_CACHE_DIR",
                 help="Summary cache folder (default: $XDG_CACHE_HOME/eaglelint)."),
    click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Processes that parse files (pays off on cold runs of large trees)."),
    click.option("--dependents/--no-dependents", default=None,
                 help="Given files, also check wrappers in other files of the same models folder whose "
                      "wrapped class or bases live in them (default: on)."),
]


def common(fn):
    for decorator in reversed(COMMON):
        fn = decorator(fn)
    return fn


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
@click.option("--noqa-reason", default=DEFAULT_REASON, metavar="TEXT", help="The REASON --add-noqa writes.")
@click.option("--baseline", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Do not report the findings FILE holds (see --write-baseline).")
@click.option("--write-baseline", is_flag=True, help="Record every current finding in the --baseline FILE.")
def check(output_format, output_file, quiet, statistics, exit_zero, report_unused_suppressions, apply_fixes,
          show_fixes, add_noqa, noqa_reason, baseline, write_baseline, paths, **opts):
    """Report wrapper classes that lack interface methods their wrapped model has.

    PATH is a file or a folder (searched for *.py). With no PATH, this checkout's
    models folder (python/sglang/srt/models, sglang/srt/models, or srt/models from
    here up) is checked, else that of the installed sglang package (found, never
    imported); the tree checked is named on stderr. Given files (as pre-commit passes
    them), wrappers in other files of the same models folder that depend on them are
    checked too, each with the reason.

    \b
    Examples:
      eaglelint check python/sglang/srt/models
      eaglelint check kimi_k25.py --output-format json
      eaglelint check --output-format sarif -o eaglelint.sarif python/sglang/srt/models
    """
    if write_baseline and baseline is None:
        raise UsageProblem("--write-baseline needs --baseline FILE")
    if write_baseline and not baseline.exists():
        write_baseline_file(baseline, [])  # the config may name it too: an empty one holds nothing yet
    finder = _finder(opts, report_unused_suppressions=report_unused_suppressions, baseline=baseline)
    targets = _paths(paths, installed=not (apply_fixes or add_noqa))
    progress = progress_bar if wants_progress(quiet, output_format) and not output_file else None
    project = make_project(opts["no_cache"], opts["cache_dir"])
    result = run_lint(targets, finder, project, progress, opts["jobs"])
    if write_baseline:
        count = write_baseline_file(baseline, result.findings + result.baselined)
        click.echo(f"Wrote {plural(count, 'finding')} to the baseline {baseline}.", err=True)
        sys.exit(0)
    if add_noqa:
        added, files, failed = add_noqa_comments(result.findings, targets, noqa_reason.strip())
        for problem in failed:
            click.echo(problem, err=True)
        click.echo(f"Added {plural(added, 'noqa directive')} in {plural(files, 'file')}.")
        sys.exit(1 if failed else 0)
    if apply_fixes:
        console = Console(soft_wrap=True, stderr=output_format != "text" or bool(output_file))
        written = write_plan(plan(result, project, targets), console)
        print_fixed(console, written, show_fixes)
        result = run_lint(targets, finder, make_project(opts["no_cache"], opts["cache_dir"]), jobs=opts["jobs"])
    with open_output(output_file) as out:
        write_report(result.findings, output_format, out, quiet=quiet, statistics_only=statistics)
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
    finder = _finder(opts, style=style)
    targets = _paths(paths)
    project = make_project(opts["no_cache"], opts["cache_dir"])
    result = run_lint(targets, finder, project, jobs=opts["jobs"])
    fix_plan = plan(result, project, targets)
    console = Console(soft_wrap=True, stderr=not write)
    if not write:
        for file_fix in fix_plan.files:
            sys.stdout.write(file_fix.diff(display_path(file_fix.path)))
        methods = sum(len(f.added) for f in fix_plan.files)
        console.print(f"Would add {methods} method{'s' if methods != 1 else ''} in {len(fix_plan.files)} file"
                      f"{'s' if len(fix_plan.files) != 1 else ''}; run with --write to apply.", highlight=False)
        print_left(console, fix_plan.left)
        sys.exit(1 if fix_plan.files else 0)
    print_fixed(console, write_plan(fix_plan, console), show_fixes)
    remaining = run_lint(targets, finder, make_project(opts["no_cache"], opts["cache_dir"]), jobs=opts["jobs"])
    still = {(f.path, f.class_name, f.code, f.method) for f in remaining.findings}
    left = [(f, why) for f, why in fix_plan.left if (f.path, f.class_name, f.code, f.method) in still]
    print_left(console, left)
    print_fix_commands(console, [f for f, _ in left if f.included_because])  # dependents, not given
    sys.exit(1 if remaining.failing else 0)


for command in (rules_cmd, rule_cmd, interfaces_cmd):
    cli.add_command(command)


def main() -> None:
    debug = "--debug" in sys.argv[1:]
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
