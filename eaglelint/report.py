"""Printing findings: a human report grouped by file, or a stable JSON list.

The JSON schema (one object per finding, keys always present) is documented in
README.md; tools and tests depend on it, so keys are only ever added.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TextIO

from rich.console import Console
from rich.markup import escape

from .checker import Finding

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def finding_dict(f: Finding) -> dict:
    return {
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
        "class": f.class_name,
        "wrapped_class": f.wrapped_class,
        "method": f.method,
        "wrapped_path": f.wrapped_path,
        "wrapped_line": f.wrapped_line,
        "provider_class": f.provider_class,
        "interface": f.interface,
        "wrapper_attribute": f.wrapper_attribute,
        "entry_class": f.entry_class,
        "subclasses": list(f.subclasses),
        "fixable": f.fixable,
    }


def write_json(findings: list[Finding], out: TextIO) -> None:
    json.dump([finding_dict(f) for f in findings], out, indent=2)
    out.write("\n")


def write_text(findings: list[Finding], console: Console, quiet: bool = False, statistics: bool = False) -> None:
    current = None
    for f in findings:
        if f.path != current and not quiet:
            if current is not None:
                console.print()
            console.print(f"[bold]{escape(f.path)}[/]")
            current = f.path
        style = SEVERITY_STYLE.get(f.severity, "")
        entry = " [dim](EntryClass)[/]" if f.entry_class else ""
        location = f"{escape(f.path)}:{f.line}:{f.column}" if quiet else f"  {f.line}:{f.column}"
        console.print(f"{location} [{style}]{f.code}[/] {escape(f.message)}{entry}", highlight=False)
    if statistics:
        write_statistics(findings, console)
    if quiet:
        return
    counts = Counter(f.code for f in findings)
    if not findings:
        console.print("[green]All checked: no findings.[/]")
        return
    fixable = sum(1 for f in findings if f.fixable)
    by_code = ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()))
    console.print(
        f"\nFound {len(findings)} finding{'s' if len(findings) != 1 else ''} ({by_code}); "
        f"{fixable} fixable with `eaglelint fix --write`."
    )


def write_statistics(findings: list[Finding], console: Console) -> None:
    from .interfaces import load_codes

    codes = load_codes()
    console.print()
    for code, n in Counter(f.code for f in findings).most_common():
        fix = "[*]" if codes[code].fixable else "   "
        console.print(f"{n:5d} {code} {fix} {codes[code].name}", highlight=False)
