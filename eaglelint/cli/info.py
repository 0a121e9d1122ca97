"""Commands that explain rather than check: the rule codes, and the engine's interfaces.

Kept apart from cli/main.py so that the check/fix shell stays small; main.py registers them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..config import split_flag
from ..packs import RuleCode, RulesError, load_codes, select_interfaces


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
    click.echo(f"{rule_facts(rule)}\n")
    click.echo("\n\n".join(f"{title}\n{text}" for title, text, _ in rule_sections(rule)))


def rule_facts(rule: RuleCode) -> str:
    return f"Severity: {rule.severity}. Automatic fix: {'yes (eaglelint fix)' if rule.fixable else 'no'}. " \
           f"Implemented in `{implemented_in(rule.code)}`."


def implemented_in(code: str) -> str:
    """The module that makes `code`'s findings: its rule family's (checks/registry.py), or the
    stage that reports it (an unused suppression, a file or class that could not be checked)."""
    from ..checks import registry
    from ..findings import INTERNAL_ERROR
    from ..pipeline import suppressions

    stages = {suppressions.UNUSED_SUPPRESSION: suppressions.__name__, INTERNAL_ERROR: registry.__name__}
    found = registry.module_of(code) or stages.get(code)
    assert found is not None, f"{code}: no module makes its findings"
    return found


def rule_sections(rule: RuleCode) -> list[tuple[str, str, bool]]:
    """A rule's page, in order: (title, text, whether the text is code). `eaglelint rule CODE`
    prints it and docs/rules.md is made of it, so both read the same way."""
    sections = [("What it finds", rule.what, False), ("Why it breaks SGLang", rule.why, False),
                ("Bad", rule.bad, True), ("Good", rule.good, True)]
    return sections + ([("The fix", rule.fix, False)] if rule.fix else [])


def rules_markdown() -> str:
    """docs/rules.md: an index of every code, then each code's page (scripts/gen_rules_doc.py writes it)."""
    codes = load_codes()
    out = ["# Rule codes", "",
           "<!-- Generated from rules/codes.toml by `python scripts/gen_rules_doc.py`; do not edit by hand. -->", "",
           "Each code is stable: codes are never renumbered, only added. `eaglelint rule CODE` prints",
           "the same page in a terminal. The bad and good examples are run as tests.", "",
           "| code | name | severity | fixable | finds |", "| --- | --- | --- | --- | --- |"]
    out += [f"| [{r.code}](#{r.code.lower()}-{r.name}) | {r.name} | {r.severity} | {'yes' if r.fixable else 'no'} "
            f"| {r.summary} |" for r in codes.values()]
    for rule in codes.values():
        out += ["", f"## {rule.code} {rule.name}", "", f"{rule.summary}.", "", rule_facts(rule)]
        for title, text, is_code in rule_sections(rule):
            out += ["", f"### {title}", ""]
            out += ["```python", text.strip("\n"), "```"] if is_code else [text.strip("\n")]
    return "\n".join(out) + "\n"


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
    from ..drift.compare import compare, locate_root, release_version, to_json, write_text
    from ..drift.scan import load_scan_rules, scan_engine

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
