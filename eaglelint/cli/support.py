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

from ..config import split_flag
from ..findings import display_path
from ..output.report import on_terminal
from ..packs import RulesError, select_interfaces
from .options import target_paths

if TYPE_CHECKING:
    from ..pipeline.support import Row

COLORS = ("green", "yellow", "cyan", "red", "dim", "blue", "dim")  # one per support.STATUSES entry, in order
COLUMNS = ("file", "class", "pack", "status", "detail")


def _cells(row: Row) -> tuple[str, ...]:
    return (display_path(row.path), row.entry, row.pack, row.status, row.detail)


def write_markdown(rows: list[Row], out) -> None:
    out.write("| " + " | ".join(COLUMNS) + " |\n| " + " | ".join("---" for _ in COLUMNS) + " |\n")
    for row in rows:
        cells = [c.replace("|", "\\|").replace("\n", " ") for c in _cells(row)]
        cells[0], cells[1] = f"`{cells[0]}`", f"`{cells[1]}`"
        out.write("| " + " | ".join(cells) + " |\n")


def write_tsv(rows: list[Row], out) -> None:
    """One line per row, tab-separated, a header first: for cut, awk and spreadsheets."""
    out.write("\t".join(COLUMNS) + "\n")
    for row in rows:
        out.write("\t".join(" ".join(c.split()) for c in _cells(row)) + "\n")


def write_table(rows: list[Row]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..pipeline.support import STATUSES

    style = dict(zip(STATUSES, COLORS, strict=True))
    table = Table(show_lines=False)
    for column in COLUMNS:
        table.add_column(column, overflow="fold")  # a long file or class name wraps, never cut to "…"
    for row in rows:
        cells = [escape(c) for c in _cells(row)]
        cells[3] = f"[{style[row.status]}]{cells[3]}[/]"
        table.add_row(*cells)
    console = Console(width=None if on_terminal(sys.stdout) else 240)  # asked for into a pipe: wide
    console.print(table)
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    console.print(", ".join(f"{n} {s}" for s, n in counts.items() if n))


@click.command("support")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--interface", multiple=True, metavar="PACK[,PACK]",
              help="Packs to judge (default: the default packs, EAGLE-3; `all` for every SGLang pack).")
@click.option("--output-format", type=click.Choice(["table", "markdown", "tsv", "json"]), default=None,
              help="table: a rich table (the default on a terminal); markdown: one row per line, nothing cut "
                   "(the default into a file or pipe); tsv: tab-separated with a header line; json: for tools.")
def support_cmd(paths, interface, output_format):
    """For every registered model class (each EntryClass entry) and pack: supported,
    fixable gap (delegation), implementable (owner), not supported, or unknown (why).

    \b
    Examples:
      eaglelint support python/sglang/srt/models
      eaglelint support --interface eagle3,dflash > SUPPORT.md     # Markdown
      eaglelint support --output-format tsv | cut -f2,4
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

    from ..pipeline.support import support_matrix  # the whole analysis: loaded by the command that runs it

    rows = support_matrix(list(paths), packs)
    if output_format == "json":
        json.dump([{"path": display_path(r.path), "class": r.entry, "pack": r.pack, "status": r.status,
                    "detail": r.detail} for r in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif output_format == "markdown" or output_format is None and not on_terminal(sys.stdout):
        write_markdown(rows, sys.stdout)
    elif output_format == "tsv":
        write_tsv(rows, sys.stdout)
    else:
        write_table(rows)
