"""Which report a `check` run writes, and where (standard output or `--output-file`).

Why one place: every format, `--statistics` (the counts only, as ruff prints them)
and `--output-file` combine the same way, whatever the command did before (a plain
check, `--fix`). Findings hold absolute paths; each writer shows them relative to the
working directory (`findings.display_path`), except SARIF and GitHub annotations,
which are relative to the repository root, what those consumers resolve.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from ..findings import Finding
from ..fix.run import fix_command_lines
from .report import (
    plain,
    statistics,
    statistics_lines,
    text_lines,
    write_concise,
    write_github,
    write_json,
    write_lines,
)

if TYPE_CHECKING:
    from ..fix.edits import FixPlan

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
                 statistics_only: bool = False, fix_plan: FixPlan | None = None) -> None:
    """Each format's writer is imported when it is asked for: a run pays for its own report only.
    `fix_plan` (SARIF only) is what `fix --write` would write, for the results' fixes[]."""
    if statistics_only:
        if output_format == "json":
            json.dump(statistics(findings), out, indent=2)
            out.write("\n")
        else:
            write_lines(statistics_lines(findings), out)
    elif output_format == "json":
        write_json(findings, out)
    elif output_format == "sarif":
        from .sarif import write_sarif

        write_sarif(findings, out, fix_plan=fix_plan)
    elif output_format == "github":
        from .sarif import repo_root

        write_github(findings, out, repo_root())
    elif output_format == "junit":
        from .junit import write_junit

        write_junit(findings, out)
    elif output_format == "concise":
        write_concise(findings, out)
    else:
        lines = text_lines(findings, quiet=quiet)
        if not quiet:
            lines += [plain(line) for line in fix_command_lines(findings)]
        write_lines(lines, out)
