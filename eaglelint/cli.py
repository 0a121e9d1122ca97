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
from .cache import SummaryCache, default_cache_dir
from .checker import display_path
from .config import ConfigError, check_attributes, check_codes, check_interfaces, split_flag
from .delegation import STYLES
from .discover import default_models_dir
from .fix import FixError, FixPlan, plan_fixes, write_fix
from .info_commands import interfaces_cmd, rule_cmd, rules_cmd
from .lint import LintResult, SettingsFinder, lint
from .modules import Project
from .report import progress_bar, wants_progress, write_github, write_json, write_statistics, write_text
from .sarif import write_sarif
from .support_cmd import support_cmd


class UsageProblem(click.UsageError):
    """A mistake in how eaglelint was called (exit 2)."""


def _paths(paths: tuple[Path, ...]) -> list[Path]:
    if paths:
        return list(paths)
    found = default_models_dir()
    if found is None:
        raise UsageProblem(
            "no PATH given and no SGLang models folder found (looked for the installed "
            "sglang package, ./python/sglang/srt/models and ./sglang/srt/models); "
            "pass the folder or files to check, e.g. `eaglelint check sglang/srt/models`"
        )
    return [found]


def _finder(opts: dict, **extra) -> SettingsFinder:
    """Settings from config files, with the flags that were given laid over them."""
    if opts["config"] and opts["isolated"]:
        raise UsageProblem("--config and --isolated exclude each other")
    try:
        overrides = {
            "select": _codes(opts["select"], "--select"),
            "ignore": _codes(opts["ignore"], "--ignore"),
            "exclude": split_flag(opts["exclude"]),
            "interfaces": _checked(check_interfaces, opts["interface"], "--interface"),
            "wrapper_attributes": _checked(check_attributes, opts["wrapper_attribute"], "--wrapper-attribute"),
            "dependents": opts["dependents"],
            **extra,
        }
        return SettingsFinder(overrides, opts["config"], opts["isolated"])
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from None


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


def run_lint(paths: tuple[Path, ...], finder: SettingsFinder, project: Project, progress=None,
             jobs: int = 1) -> LintResult:
    try:
        result = lint(_paths(paths), finder, project, progress, jobs=jobs)
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from None
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
    click.option("--select", multiple=True, metavar="CODE[,CODE]", help="Only report these rule codes."),
    click.option("--ignore", multiple=True, metavar="CODE[,CODE]", help="Do not report these rule codes."),
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
@click.option("--output-format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="sarif: SARIF 2.1.0 for code scanning; github: workflow annotations.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the findings.")
@click.option("--statistics", is_flag=True, help="Print counts per rule code.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--report-unused-suppressions", is_flag=True, default=None,
              help="Report `# noqa: EGL...` / `# eaglelint: ignore[...]` comments that suppress nothing (EGL900).")
def check(output_format, quiet, statistics, exit_zero, report_unused_suppressions, paths, **opts):
    """Report wrapper classes that lack interface methods their wrapped model has.

    PATH is a file or a folder (searched for *.py). With no PATH, the srt/models
    folder of the installed sglang package (found, never imported) is checked.
    Given files (as pre-commit passes them), wrappers in other files of the same
    models folder that depend on them are checked too, each with the reason.

    \b
    Examples:
      eaglelint check python/sglang/srt/models
      eaglelint check kimi_k25.py --output-format json
      eaglelint check --output-format sarif python/sglang/srt/models > eaglelint.sarif
    """
    finder = _finder(opts, report_unused_suppressions=report_unused_suppressions)
    progress = progress_bar if wants_progress(quiet, output_format) else None
    project = make_project(opts["no_cache"], opts["cache_dir"])
    result = run_lint(paths, finder, project, progress, opts["jobs"])
    if output_format == "json":
        write_json(result.findings, sys.stdout)
    elif output_format == "sarif":
        write_sarif(result.findings, sys.stdout)
    elif output_format == "github":
        write_github(result.findings, sys.stdout)
    else:
        write_text(result.findings, Console(soft_wrap=True), quiet=quiet, statistics=statistics)
    if statistics and output_format != "text":
        write_statistics(result.findings, Console(soft_wrap=True, stderr=True))
    sys.exit(0 if exit_zero or not result.findings else 1)


@cli.command()
@common
@click.option("--write", is_flag=True, help="Apply the fixes to the files.")
@click.option("--diff", "show_diff", is_flag=True, help="Only print a unified diff (the default without --write).")
@click.option("--style", type=click.Choice(STYLES), default=None,
              help="guard (default): hasattr guard, raising AttributeError where a value is returned; "
                   "raise: guard that always raises; plain: call without a guard. Overrides [tool.eaglelint.fix].")
def fix(write, show_diff, style, paths, **opts):
    """Write delegating methods for every fixable finding.

    Without --write nothing changes and a unified diff is printed. Files are
    written only if the result parses, atomically, keeping encoding, line endings
    and indentation; the rest of each file is left byte-for-byte as it was.

    \b
    Examples:
      eaglelint fix python/sglang/srt/models            # show the diff
      eaglelint fix python/sglang/srt/models --write
    """
    if write and show_diff:
        raise UsageProblem("--write and --diff exclude each other")
    finder = _finder(opts, style=style)
    project = make_project(opts["no_cache"], opts["cache_dir"])
    result = run_lint(paths, finder, project, jobs=opts["jobs"])
    plan = _plan(result, project, _fix_roots(paths))
    console = Console(soft_wrap=True, stderr=not write)
    if not write:
        for file_fix in plan.files:
            sys.stdout.write(file_fix.diff(display_path(file_fix.path)))
        methods = sum(len(f.added) for f in plan.files)
        console.print(f"Would add {methods} method{'s' if methods != 1 else ''} in {len(plan.files)} file"
                      f"{'s' if len(plan.files) != 1 else ''}; run with --write to apply.", highlight=False)
        _print_left(console, plan.left)
        sys.exit(1 if result.findings else 0)
    failed = []
    for file_fix in plan.files:
        try:
            write_fix(file_fix)
        except FixError as exc:
            failed.append((file_fix, str(exc)))
            console.print(f"[red]not written[/] {display_path(file_fix.path)}: {exc}", highlight=False)
    written = [f for f in plan.files if f not in [x for x, _ in failed]]
    methods = sum(len(f.added) for f in written)
    console.print(f"Added {methods} method{'s' if methods != 1 else ''} in {len(written)} file"
                  f"{'s' if len(written) != 1 else ''}.", highlight=False)
    remaining = run_lint(paths, finder, make_project(opts["no_cache"], opts["cache_dir"]), jobs=opts["jobs"]).findings
    still = {(f.path, f.class_name, f.code, f.method) for f in remaining}
    _print_left(console, [(f, why) for f, why in plan.left if (f.path, f.class_name, f.code, f.method) in still])
    sys.exit(1 if remaining else 0)


def _fix_roots(paths: tuple[Path, ...]) -> list[Path]:
    """Where fix may write: the given paths only. A dependent found next to a given file
    (a wrapper whose wrapped class changed) is reported, and fixed when it is given too."""
    return _paths(paths)


def _plan(result: LintResult, project: Project, roots: list[Path]) -> FixPlan:
    """One plan, each file fixed in the style its own configuration asks for, none outside `roots`."""
    plan = FixPlan()
    styles = sorted(set(result.style_of.values()))
    for style in styles:
        findings = [f for f in result.findings if result.style_of.get(f.path) == style]
        part = plan_fixes(findings, project, style, roots)
        plan.files += part.files
        plan.left += part.left
    return plan


def _print_left(console: Console, left) -> None:
    if left:
        console.print(f"{len(left)} finding{'s' if len(left) != 1 else ''} left without an automatic fix:")
        for f, reason in left:
            where = f" {f.class_name}{'.' + f.method if f.method else ''}" if f.class_name else ""
            console.print(f"  {f.path}:{f.line}:{f.column} {f.code}{where}: {reason}", highlight=False)


for command in (rules_cmd, rule_cmd, interfaces_cmd, support_cmd):
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
