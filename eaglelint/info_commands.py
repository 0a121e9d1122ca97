"""Commands that explain rather than check: the rule codes, and the engine's interfaces.

Kept apart from cli.py so that the check/fix shell stays small; cli.py registers them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .config import split_flag
from .packs import RulesError, load_codes, select_interfaces


@click.command("rules")
def rules_cmd():
    """List every rule code with a one-line summary.

    \b
    Example:
      eaglelint rules
    """
    for code, rule in load_codes().items():
        fix = "fixable" if rule.fixable else "       "
        click.echo(f"{code}  {rule.severity:<7}  {fix}  {rule.name}: {rule.summary}")


@click.command("rule")
@click.argument("code")
def rule_cmd(code: str):
    """Explain one rule code: what it finds, why it breaks SGLang, bad and good code.

    \b
    Example:
      eaglelint rule EGL001
    """
    rule = load_codes().get(code.upper())
    if rule is None:
        raise click.UsageError(f"unknown rule code {code!r}; see `eaglelint rules`")
    click.echo(f"{rule.code} ({rule.name}) - {rule.summary}\n")
    click.echo(f"Severity: {rule.severity}. Automatic fix: {'yes (eaglelint fix)' if rule.fixable else 'no'}.\n")
    click.echo(f"What it finds\n{rule.what}\n\nWhy it breaks SGLang\n{rule.why}\n")
    if rule.fix:
        click.echo(f"The fix\n{rule.fix}\n")
    click.echo(f"Bad\n{rule.bad}\n\nGood\n{rule.good}")


@click.command("interfaces")
@click.argument("sglang_root", required=False, type=click.Path(path_type=Path))
@click.option("--interface", multiple=True, metavar="PACK[,PACK]",
              help="Packs to compare with (default: every SGLang pack in rules/interfaces/).")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def interfaces_cmd(sglang_root, interface, output_format):
    """List what SGLang's engine calls or reads on the model object, and report drift.

    SGLANG_ROOT is the folder holding sglang/ (a checkout's python/ is found too);
    by default the installed sglang package (found, never imported). Each name is
    printed with its call sites and whether the engine requires it or tests for it
    (hasattr/getattr). Exit 1 on drift: a name no selected pack covers and that
    rules/engine.toml does not list as known, or a pack entry the engine does not use.

    \b
    Examples:
      eaglelint interfaces python/
      eaglelint interfaces --interface eagle3,dflash --output-format json
    """
    from .drift.compare import compare, locate_root, release_version, to_json, write_text
    from .drift.scan import load_scan_rules, scan_engine

    root = locate_root(sglang_root)
    if root is None:
        where = sglang_root or "the installed sglang package or the working directory"
        raise click.UsageError(f"no SGLang source (a folder holding sglang/srt) at {where}")
    try:
        packs = select_interfaces(list(split_flag(interface) or ()) if interface else ["all"])
        rules = load_scan_rules()
    except RulesError as exc:
        raise click.UsageError(str(exc)) from None
    if not any(p.engine == "sglang" for p in packs):
        raise click.UsageError("`interfaces` compares SGLang's engine with SGLang packs; select at least one")
    scan = scan_engine(root, rules, release_version(root))
    drift = compare(scan, packs, rules)
    if output_format == "json":
        json.dump(to_json(scan, drift, packs, rules), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        write_text(scan, drift, packs, rules, sys.stdout)
    sys.exit(1 if drift.found else 0)
