"""Printing findings: a human report grouped by file, a stable JSON list, or GitHub annotations.

The JSON schema (one object per finding, keys always present) is documented in
README.md; tools and tests depend on it, so keys are only ever added. SARIF lives
in sarif.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TextIO

from ..findings import Finding, display_path
from ..packs import load_codes

PROGRESS_MIN_FILES = 40  # fewer files finish before a bar would be worth drawing
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
HELP_INDENT = "    "  # under a finding's `  line:col` location
ENTRY_CLASS_LEGEND = ("(EntryClass): the class is listed in its module's `EntryClass`, so SGLang serves it as a "
                      "model architecture; a gap there breaks launching that model with speculative decoding.")


def finding_dict(f: Finding) -> dict:
    return {
        "path": display_path(f.path),
        "line": f.line,
        "column": f.column,
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
        "help": list(f.help),
        "fix_title": f.fix_title,
        "fix_refusal": f.fix_refusal,
        "class": f.class_name,
        "wrapped_class": f.wrapped_class,
        "method": f.method,
        "wrapped_path": display_path(f.wrapped_path) if f.wrapped_path else None,
        "wrapped_line": f.wrapped_line,
        "provider_class": f.provider_class,
        "interface": f.interface,
        "wrapper_attribute": f.wrapper_attribute,
        "entry_class": f.entry_class,
        "subclasses": list(f.subclasses),
        "fixable": f.fixable,
        "included_because": f.included_because,
    }


def write_json(findings: list[Finding], out: TextIO) -> None:
    json.dump([finding_dict(f) for f in findings], out, indent=2)
    out.write("\n")


Segment = tuple[str, str]  # text, and its rich style ("" for none)
Line = tuple[list[Segment], bool]  # segments, and whether rich highlights numbers and paths in it


def text_lines(findings: list[Finding], quiet: bool = False) -> list[Line]:
    """The human report, grouped by file: each finding's short message, then its help lines
    indented under it, as ruff prints a fix title (`quiet`: one line per finding, the message only)."""
    lines: list[Line] = []
    current = None
    for f in findings:
        shown = display_path(f.path)
        if shown != current and not quiet:
            if current is not None:
                lines.append(([], True))
            lines.append(([(shown, "bold")], True))
            current = shown
        location = f"{shown}:{f.line}:{f.column}" if quiet else f"  {f.line}:{f.column}"
        line = [(f"{location} ", ""), (f.code, SEVERITY_STYLE.get(f.severity, "")), (f" {f.message}", "")]
        if f.entry_class:
            line += [(" ", ""), ("(EntryClass)", "dim")]
        if f.included_because and quiet:
            line += [(" ", ""), (f"(checked because it {f.included_because})", "dim")]
        lines.append((line, False))
        if quiet:
            continue
        lines += [([(f"{HELP_INDENT}help: ", "bold cyan"), (note, "")], False) for note in f.notes]
        if f.included_because:
            lines.append(([(HELP_INDENT, ""), (f"note: checked because it {f.included_because}", "dim")], False))
    if quiet:
        return lines
    if not findings:
        return lines + [([("All checked: no findings.", "green")], True)]
    counts = Counter(f.code for f in findings)
    fixable = sum(1 for f in findings if f.fixable)
    by_code = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
    lines += [([], True), ([(f"Found {len(findings)} finding{'s' if len(findings) != 1 else ''} ({by_code}); "
                             f"{fixable} fixable with `eaglelint fix --write`.", "")], True)]
    if any(f.entry_class for f in findings):
        lines.append(([(ENTRY_CLASS_LEGEND, "dim")], False))
    return lines


def plain(text: str) -> Line:
    return [(text, "")], False


def on_terminal(out: TextIO) -> bool:
    """Whether rich would style what is written to `out` (its `Console.is_terminal`), decided
    without importing rich: a report piped to a file, CI log or pre-commit is written as
    plain text, and a warm run does not pay for loading rich."""
    tty = os.environ.get("TTY_COMPATIBLE", "")
    if tty in ("0", "1"):
        return tty == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return out.isatty()
    except ValueError:  # closed
        return False


def write_lines(lines: list[Line], out: TextIO) -> None:
    """Plain text where no terminal reads it, else styled by rich (which writes the same
    characters: a segment is text, never markup)."""
    if not on_terminal(out):
        out.write("".join("".join(text for text, _ in segments) + "\n" for segments, _ in lines))
        return
    from rich.console import Console
    from rich.highlighter import ReprHighlighter
    from rich.text import Text

    console = Console(file=out, soft_wrap=True) if out is not sys.stdout else Console(soft_wrap=True)
    highlighter = ReprHighlighter()
    for segments, highlight in lines:
        text = Text.assemble(*segments)
        if highlight:  # as rich highlights a markup string: the highlighter first, the markup's styles over it
            text, styles = highlighter(text.plain), text
            text.copy_styles(styles)
        console.print(text)


def write_concise(findings: list[Finding], out: TextIO) -> None:
    """One plain line per finding, `path:line:col: CODE message`, as ruff's concise format (no help lines)."""
    for f in findings:
        out.write(f"{display_path(f.path)}:{f.line}:{f.column}: {f.code} {f.message}\n")


def statistics(findings: list[Finding]) -> list[dict]:
    """Counts per rule code, most frequent first (`--statistics --output-format json`)."""
    codes = load_codes()
    return [{"code": code, "name": codes[code].name, "count": n, "fixable": codes[code].fixable}
            for code, n in Counter(f.code for f in findings).most_common()]


def statistics_lines(findings: list[Finding]) -> list[Line]:
    """`  COUNT CODE [*] name` per code, most frequent first; `[*]` marks a fixable code."""
    codes = load_codes()
    return [plain(f"{n:5d} {code} {'[*]' if codes[code].fixable else '   '} {codes[code].name}")
            for code, n in Counter(f.code for f in findings).most_common()]


GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_github(findings: list[Finding], out: TextIO, root: Path) -> None:
    """GitHub Actions workflow commands: each finding becomes an annotation on its line.

    GitHub places an annotation by the path relative to the repository root, whatever
    directory eaglelint ran in (`python/` in an SGLang fork), so paths are made relative
    to `root`, the enclosing git work tree, as SARIF's are."""
    for f in findings:
        message = f.message + (f" (checked because it {f.included_because})" if f.included_because else "")
        message += "".join(f"\nhelp: {note}" for note in f.notes)  # an annotation shows every line
        absolute = Path(os.path.abspath(f.path))
        where = absolute.relative_to(root).as_posix() if absolute.is_relative_to(root) else display_path(f.path)
        out.write(f"::{GITHUB_COMMAND[f.severity]} file={_escape_property(where)},line={f.line},"
                  f"col={f.column},title={_escape_property(f.code)}::{_escape_data(f.code + ' ' + message)}\n")


def progress_bar(files: list[Path]):
    """A transient bar on stderr while files are read; drawn only for long runs on a terminal."""
    if len(files) < PROGRESS_MIN_FILES:
        yield from files
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("Checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("check", total=len(files))
        for path in files:
            yield path
            bar.advance(task)


def wants_progress(quiet: bool, output_format: str) -> bool:
    return output_format == "text" and not quiet and sys.stdout.isatty() and sys.stderr.isatty()
