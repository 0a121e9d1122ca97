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
from .checker import CheckOptions, CheckResult, check_files, display_path, file_error
from .delegation import STYLES
from .discover import default_models_dir, discover
from .fix import FixError, plan_fixes, write_fix
from .interfaces import RulesError, load_codes, select_interfaces
from .modules import Project
from .report import write_json, write_text


class UsageProblem(click.UsageError):
    """A mistake in how eaglelint was called (exit 2)."""


def _split(values: tuple[str, ...]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


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


def run_check(paths: tuple[Path, ...], interface: tuple[str, ...], wrapper_attribute: tuple[str, ...],
              select: tuple[str, ...], ignore: tuple[str, ...], project: Project | None = None) -> CheckResult:
    try:
        interfaces = select_interfaces(_split(interface) or None)
    except RulesError as exc:
        raise UsageProblem(str(exc)) from None
    codes = load_codes()
    for code in _split(select) + _split(ignore):
        if code not in codes:
            raise UsageProblem(f"unknown rule code {code!r}; see `eaglelint rules`")
    found = discover(_paths(paths))
    if not found.files and found.errors:
        raise UsageProblem("nothing to check: " + "; ".join(f"{p}: {r}" for p, r in found.errors))
    attrs = tuple(_split(wrapper_attribute)) or ("language_model",)
    ctx = click.get_current_context(silent=True)
    debug = bool(ctx and isinstance(ctx.obj, dict) and ctx.obj.get("debug"))
    result = check_files(found.files, CheckOptions(tuple(interfaces), attrs, debug), project)
    result.findings[:0] = [file_error(p, r) for p, r in found.errors]
    keep, drop = set(_split(select)), set(_split(ignore))
    result.findings = [
        f for f in result.findings if (not keep or f.code in keep) and f.code not in drop
    ]
    return result


COMMON = [
    click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
    click.option("--interface", multiple=True, metavar="PACK[,PACK]",
                 help="Interface packs from rules/ to check (default: the default packs, EAGLE-3)."),
    click.option("--wrapper-attribute", multiple=True, metavar="NAME",
                 help="Attribute that holds the wrapped model (default: language_model)."),
    click.option("--select", multiple=True, metavar="CODE[,CODE]", help="Only report these rule codes."),
    click.option("--ignore", multiple=True, metavar="CODE[,CODE]", help="Do not report these rule codes."),
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
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="Print only the findings.")
@click.option("--statistics", is_flag=True, help="Print counts per rule code.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
def check(paths, interface, wrapper_attribute, select, ignore, output_format, quiet, statistics, exit_zero):
    """Report wrapper classes that lack interface methods their wrapped model has.

    PATH is a file or a folder (searched for *.py). With no PATH, the srt/models
    folder of the installed sglang package (found, never imported) is checked.

    \b
    Examples:
      eaglelint check python/sglang/srt/models
      eaglelint check kimi_k25.py --output-format json
    """
    result = run_check(paths, interface, wrapper_attribute, select, ignore)
    if output_format == "json":
        write_json(result.findings, sys.stdout)
    else:
        write_text(result.findings, Console(soft_wrap=True), quiet=quiet, statistics=statistics)
    sys.exit(0 if exit_zero or not result.findings else 1)


@cli.command()
@common
@click.option("--write", is_flag=True, help="Apply the fixes to the files.")
@click.option("--diff", "show_diff", is_flag=True, help="Only print a unified diff (the default without --write).")
@click.option("--style", type=click.Choice(STYLES), default="guard", show_default=True,
              help="guard: hasattr guard, raising AttributeError where a value is returned; "
                   "raise: guard that always raises; plain: call without a guard.")
def fix(paths, interface, wrapper_attribute, select, ignore, write, show_diff, style):
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
    project = Project()
    result = run_check(paths, interface, wrapper_attribute, select, ignore, project)
    plan = plan_fixes(result.findings, project, style, roots=_paths(paths))
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
    remaining = run_check(paths, interface, wrapper_attribute, select, ignore).findings
    still = {(f.path, f.class_name, f.code, f.method) for f in remaining}
    _print_left(console, [(f, why) for f, why in plan.left if (f.path, f.class_name, f.code, f.method) in still])
    sys.exit(1 if remaining else 0)


def _print_left(console: Console, left) -> None:
    if left:
        console.print(f"{len(left)} finding{'s' if len(left) != 1 else ''} left without an automatic fix:")
        for f, reason in left:
            where = f" {f.class_name}{'.' + f.method if f.method else ''}" if f.class_name else ""
            console.print(f"  {f.path}:{f.line}:{f.column} {f.code}{where}: {reason}", highlight=False)


@cli.command("rules")
def rules_cmd():
    """List every rule code with a one-line summary.

    \b
    Example:
      eaglelint rules
    """
    for code, rule in load_codes().items():
        fix = "fixable" if rule.fixable else "       "
        click.echo(f"{code}  {rule.severity:<7}  {fix}  {rule.name}: {rule.summary}")


@cli.command("rule")
@click.argument("code")
def rule_cmd(code: str):
    """Explain one rule code: what it finds, why it breaks SGLang, bad and good code.

    \b
    Example:
      eaglelint rule EGL001
    """
    rule = load_codes().get(code.upper())
    if rule is None:
        raise UsageProblem(f"unknown rule code {code!r}; see `eaglelint rules`")
    click.echo(f"{rule.code} ({rule.name}) - {rule.summary}\n")
    click.echo(f"Severity: {rule.severity}. Automatic fix: {'yes (eaglelint fix)' if rule.fixable else 'no'}.\n")
    click.echo(f"What it finds\n{rule.what}\n\nWhy it breaks SGLang\n{rule.why}\n")
    click.echo(f"Bad\n{rule.bad}\n\nGood\n{rule.good}")


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
