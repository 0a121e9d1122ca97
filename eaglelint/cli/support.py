"""`eaglelint support`: the support matrix as a rich table, Markdown, TSV or JSON.

Kept apart from pipeline/support.py so that the matrix stays plain data (tests, JSON) and
the command only renders it; cli/main.py registers the command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..config import ConfigError, split_flag
from ..findings import Finding, display_path
from ..output.report import on_terminal
from ..packs import RulesError, select_interfaces
from .options import target_paths

if TYPE_CHECKING:
    from ..pipeline.checkpoint import Verdict
    from ..pipeline.support import Row

# one per support.STATUSES entry, in order
COLORS = ("green", "yellow", "cyan", "magenta", "red", "dim", "blue", "dim")
COLUMNS = ("file", "class", "pack", "status", "detail")


def _detail(row: Row, verbose: bool) -> str:
    """The row's detail, and where the checkpoint chooses the model it holds, what the models
    it may choose give after the fix."""
    from ..pipeline.support import dependence

    said = dependence(row, verbose)
    return f"{row.detail}; {said}" if said else row.detail


def _cells(row: Row, verbose: bool = False) -> tuple[str, ...]:
    return (display_path(row.path), row.entry, row.pack, row.status, _detail(row, verbose))


def write_markdown(rows: list[Row], out, verbose: bool = False) -> None:
    out.write("| " + " | ".join(COLUMNS) + " |\n| " + " | ".join("---" for _ in COLUMNS) + " |\n")
    for row in rows:
        cells = [c.replace("|", "\\|").replace("\n", " ") for c in _cells(row, verbose)]
        cells[0], cells[1] = f"`{cells[0]}`", f"`{cells[1]}`"
        out.write("| " + " | ".join(cells) + " |\n")


def write_tsv(rows: list[Row], out, verbose: bool = False) -> None:
    """One line per row, tab-separated, a header first: for cut, awk and spreadsheets."""
    out.write("\t".join(COLUMNS) + "\n")
    for row in rows:
        out.write("\t".join(" ".join(c.split()) for c in _cells(row, verbose)) + "\n")


def rows_json(rows: list[Row], verbose: bool = False) -> list[dict]:
    """One object per row; a row whose model the checkpoint chooses adds the attribute that holds
    it and a verdict per model it may hold (`candidates`)."""
    out = []
    for r in rows:
        item: dict = {"path": display_path(r.path), "class": r.entry, "pack": r.pack, "status": r.status,
                      "detail": _detail(r, verbose)}
        if r.candidates:
            item["attribute"] = r.attribute
            item["candidates"] = [
                {"class": c.name, "path": display_path(c.path), "line": c.line, "status": c.status,
                 "verdict": c.verdict, "reason": c.reason, **({"model_types": list(c.model_types)}
                                                             if c.model_types else {})}
                for c in r.candidates]
        out.append(item)
    return out


def write_table(rows: list[Row], verbose: bool = False) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..pipeline.support import STATUSES

    style = dict(zip(STATUSES, COLORS, strict=True))
    table = Table(show_lines=False)
    for column in COLUMNS:
        table.add_column(column, overflow="fold")  # a long file or class name wraps, never cut to "…"
    for row in rows:
        cells = [escape(c) for c in _cells(row, verbose)]
        cells[3] = f"[{style[row.status]}]{cells[3]}[/]"
        table.add_row(*cells)
    console = Console(width=None if on_terminal(sys.stdout) else 240)  # asked for into a pipe: wide
    console.print(table)
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))


# the exit code of several verdicts (one per pack): the worst, as each status's code says
EXIT_ORDER = (0, 3, 4, 1)
CONFIG_FILE = "config.json"


def read_checkpoint_config(path: Path) -> dict:
    """The checkpoint's config as a dict; a one-line ConfigError where it cannot be read."""
    file = path / CONFIG_FILE if path.is_dir() else path
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {getattr(exc, 'strerror', None) or exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file} is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{file} holds a JSON {type(config).__name__}, not an object")
    return config


def _finding_json(f: Finding) -> dict:
    return {"code": f.code, "path": display_path(f.path), "line": f.line, "class": f.class_name,
            "message": f.message, "help": list(f.help), "fix_title": f.fix_title, "fix_refusal": f.fix_refusal,
            "fixable": f.fixable}


def verdicts_json(verdicts: list[Verdict], checkpoint: Path | None) -> list[dict]:
    out = []
    for v in verdicts:
        pick = v.pick
        out.append({
            "config": str(checkpoint) if checkpoint is not None else None, "architecture": v.architecture,
            "pack": v.pack, "verdict": v.status, "reason": v.reason,
            "class": v.served.entry if v.served else None,
            "path": display_path(v.served.path) if v.served else None,
            "class_status": v.served.status if v.served else None,
            "held": None if pick is None else {
                "attribute": pick.attr, "key": pick.key, "value": pick.value,
                "class": pick.cls.qualname if pick.cls else None,
                "status": v.held.status if v.held else None,
                "decided_at": f"{display_path(pick.path)}:{pick.line}"},
            "codes": list(dict.fromkeys(f.code for f in v.findings)),
            "findings": [_finding_json(f) for f in v.findings],
        })
    return out


def write_verdicts(verdicts: list[Verdict], checkpoint: Path | None) -> None:
    """Plain lines: the served class, what it holds for this checkpoint, then per pack the
    verdict, why, and the findings it rests on."""
    first = verdicts[0] if verdicts else None
    if first is not None and first.served is not None:
        click.echo(f"{first.architecture}: served as {first.served.entry} ({display_path(first.served.path)})")
    elif first is not None and first.architecture:
        click.echo(f"{first.architecture}: registered by no module")
    for v in verdicts:
        click.echo(f"{v.pack}: {v.status}")
        click.echo(f"  why: {v.reason}")
        for f in v.findings:
            click.echo(f"  {f.code} {display_path(f.path)}:{f.line}: {f.message}")
            for note in f.notes:
                click.echo(f"    help: {note}")


@click.command("support")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--interface", multiple=True, metavar="PACK[,PACK]",
              help="Packs to judge (default: the default packs, EAGLE-3; `all` for every SGLang pack).")
@click.option("--output-format", type=click.Choice(["table", "markdown", "tsv", "json"]), default=None,
              help="table: a rich table (the default on a terminal); markdown: one row per line, nothing cut "
                   "(the default into a file or pipe); tsv: tab-separated with a header line; json: for tools. "
                   "With --config: json, or text for any other.")
@click.option("--config", "checkpoint", type=click.Path(path_type=Path), metavar="PATH",
              help="A checkpoint's config.json (or its folder): one verdict for that checkpoint, resolved as "
                   "SGLang resolves it. Exit 0 supported, 3 supported after `eaglelint fix --write`, "
                   "1 not supported, 4 unknown, 2 a config that cannot be read.")
@click.option("--arch", metavar="NAME", help="The architecture to judge (as the config's architectures[0]); "
              "with --config, overrides it.")
@click.option("--verbose", "-v", is_flag=True,
              help="Where the checkpoint chooses a class's language model, name every model it may choose "
                   "(without it, a group of more than 8 is counted).")
def support_cmd(paths, interface, output_format, checkpoint, arch, verbose):
    """For every registered model class (each EntryClass entry) and pack: supported,
    fixable gap (delegation), implementable (owner), depends on checkpoint (which of the
    models it may hold work after the fix), not supported, or unknown (why).

    \b
    Examples:
      eaglelint support python/sglang/srt/models
      eaglelint support --interface eagle3,dflash > SUPPORT.md     # Markdown
      eaglelint support --output-format tsv | cut -f2,4
      eaglelint support --config ./my-checkpoint python/sglang/srt/models   # one checkpoint
    """
    try:
        packs = [p for p in select_interfaces(list(split_flag(interface) or ()) or None) if p.engine == "sglang"]
    except RulesError as exc:
        raise click.UsageError(str(exc)) from None
    if not packs:
        raise click.UsageError("`support` judges SGLang model classes; select at least one SGLang pack")
    paths = tuple(target_paths(paths, installed=True))  # it only reads: the installed package will do
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise click.UsageError(f"no such file or folder: {', '.join(missing)}")

    if checkpoint is not None or arch is not None:
        config = read_checkpoint_config(checkpoint) if checkpoint is not None else {}
        from ..pipeline.checkpoint import EXIT_CODES, checkpoint_verdicts

        verdicts = checkpoint_verdicts(list(paths), packs, config, arch)
        if output_format == "json":
            json.dump(verdicts_json(verdicts, checkpoint), sys.stdout, indent=2)
            sys.stdout.write("\n")
        else:
            write_verdicts(verdicts, checkpoint)
        sys.exit(max((EXIT_CODES[v.status] for v in verdicts), key=EXIT_ORDER.index))

    from ..pipeline.support import support_matrix  # the whole analysis: loaded by the command that runs it

    rows = support_matrix(list(paths), packs)
    if output_format == "json":
        json.dump(rows_json(rows, verbose), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif output_format == "markdown" or output_format is None and not on_terminal(sys.stdout):
        write_markdown(rows, sys.stdout, verbose)
    elif output_format == "tsv":
        write_tsv(rows, sys.stdout, verbose)
    else:
        write_table(rows, verbose)
