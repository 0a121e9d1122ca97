"""Which report a `check` run writes, and where (standard output or `--output-file`).

Why one place: every format, `--statistics` (the counts only, as ruff prints them)
and `--output-file` combine the same way, whatever the command did before (a plain
check, `--fix`). Display paths stay as the findings hold them, except that SARIF and
GitHub annotations are relative to the repository root, which is what those
consumers resolve.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import click
from rich.console import Console

from ..findings import Finding
from ..fix.run import print_fix_commands
from .junit import write_junit
from .report import statistics, write_concise, write_github, write_json, write_statistics, write_text
from .sarif import repo_root, write_sarif

FORMATS = ["text", "concise", "json", "sarif", "github", "junit"]


@contextlib.contextmanager
def open_output(path: Path | None) -> Iterator[TextIO]:
    """Standard output, or the named file (an unwritable one is a one-line error, exit 2)."""
    if path is None:
        yield sys.stdout
        return
    try:
        out = open(path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise click.ClickException(f"--output-file {path}: cannot write: {exc.strerror or exc}") from None
    with out:
        yield out


def write_report(findings: list[Finding], output_format: str, out: TextIO, quiet: bool = False,
                 statistics_only: bool = False) -> None:
    if statistics_only:
        if output_format == "json":
            json.dump(statistics(findings), out, indent=2)
            out.write("\n")
        else:
            write_statistics(findings, _console(out))
    elif output_format == "json":
        write_json(findings, out)
    elif output_format == "sarif":
        write_sarif(findings, out)
    elif output_format == "github":
        write_github(findings, out, repo_root())
    elif output_format == "junit":
        write_junit(findings, out)
    elif output_format == "concise":
        write_concise(findings, out)
    else:
        console = _console(out)
        write_text(findings, console, quiet=quiet)
        if not quiet:
            print_fix_commands(console, findings)


def _console(out: TextIO) -> Console:
    return Console(file=out, soft_wrap=True) if out is not sys.stdout else Console(soft_wrap=True)
