"""SARIF 2.1.0 output, as GitHub code scanning reads it.

Why these fields: code scanning needs one `rules[]` entry per rule id to show the
rule's help, an artifact URI relative to the repository root to place the alert on
the file, and `partialFingerprints` to recognise an alert as the same one across
runs. The fingerprint hashes what identifies a finding (file, class, rule, method),
not its line, so an alert survives edits elsewhere in the file.

`fixes[]` (SARIF 2.1.0 section 3.55) says what `eaglelint fix --write` would change
for each result: the line edits its finding carries (fix/edits.py), and the import
lines the fix stage writes for the imports it needs, each as a replacement of a region
of whole lines. Findings fixed together share their import lines (one
`from typing import ...` for all), so such a line is in each of their fixes:
applying every result's fix, an edit shared by several once, gives exactly the bytes
`fix --write` writes. The fixes of one class's findings insert their members at one
place (the end of the class body); the results of a class are listed in the order
those members are written (the fix's rank), so that a tool applying insertions at one
place in result order writes them as `fix --write` does.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from .. import __version__
from ..findings import Finding
from ..packs import RuleCode, load_codes

if TYPE_CHECKING:  # a plan is handed in by the command that made it
    from ..fix.edits import FileFix, FixPlan

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT = "eaglelint/v1"


def repo_root(start: Path | None = None) -> Path:
    """The enclosing git work tree (a `.git` folder or file), else the working directory."""
    here = Path(os.path.abspath(start or Path.cwd()))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def information_uri() -> str:
    """The project's home page from the installed package's metadata, if it names one."""
    try:
        urls = metadata.metadata("eaglelint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "documentation", "source") and url.strip():
            return url.strip()
    return "urn:eaglelint"


def artifact(path: str, root: Path) -> dict:
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root)
    except ValueError:
        return {"uri": absolute.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": "%SRCROOT%"}


def rule_descriptor(rule: RuleCode) -> dict:
    help_text = (f"{rule.what}\n\nWhy it breaks SGLang: {rule.why}\n\nBad:\n{rule.bad}\n\nGood:\n{rule.good}\n\n"
                 f"Automatic fix: {'yes, eaglelint fix --write' if rule.fixable else 'no'}.")
    markdown = (f"{rule.what}\n\n**Why it breaks SGLang.** {rule.why}\n\n**Bad**\n```python\n{rule.bad}\n```\n\n"
                f"**Good**\n```python\n{rule.good}\n```\n\n"
                f"Automatic fix: {'`eaglelint fix --write`' if rule.fixable else 'none'}.")
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.what},
        "help": {"text": help_text, "markdown": markdown},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"tags": ["sglang", "speculative-decoding"], "problem.severity": rule.severity},
    }


def fingerprint(f: Finding, root: Path) -> str:
    where = artifact(f.path, root)["uri"]
    key = "\x00".join([f.code, where, f.class_name, f.method or "", f.wrapper_attribute or ""])
    if not f.class_name:
        key += f"\x00{f.line}"  # a file-level error: only its place identifies it
    return hashlib.sha256(key.encode()).hexdigest()


def _text_lines(fix: FileFix) -> list[str]:
    from ..analysis.syntax.sources import split_lines

    text = fix.old.decode(fix.encoding)
    return split_lines(text[1:] if text.startswith("\ufeff") else text)


def replacement(lines: list[str], start: int, end: int, new: tuple[str, ...], newline: str) -> dict:
    """One edit (lines [start, end) of `lines` become `new`) as a SARIF replacement: the deleted
    region runs from the start of its first line to the start of the line after it (columns in
    code points, as `columnKind` says), and the inserted text carries the line endings."""
    text = "".join(line + newline for line in new)
    last = lines[-1] if lines else ""
    open_end = bool(lines) and not last.endswith(("\n", "\r"))  # the file's last line has no ending
    if start >= len(lines) and lines:  # after the last line: at its very end, before its ending
        content = last.rstrip("\r\n")
        column = len(content) + 1
        region = {"startLine": len(lines), "startColumn": column, "endLine": len(lines), "endColumn": column}
        # the last line's own ending follows the insertion, and ends its last new line
        inserted = newline + text if open_end else last[len(content):] + text[: len(text) - len(newline)]
        return {"deletedRegion": region, "insertedContent": {"text": inserted}}
    if end == len(lines) > start and open_end:  # the replaced last line keeps having no ending
        region = {"startLine": start + 1, "startColumn": 1, "endLine": end, "endColumn": len(last) + 1}
        return {"deletedRegion": region, "insertedContent": {"text": text[: len(text) - len(newline)]}}
    region = {"startLine": start + 1, "startColumn": 1, "endLine": end + 1, "endColumn": 1}
    return {"deletedRegion": region, "insertedContent": {"text": text}}


def sarif_fix(fix: FileFix, finding: Finding, root: Path) -> dict:
    """The finding's share of its file's rewrite: its own edits and its import lines."""
    lines = _text_lines(fix)
    writes = finding.fix.writes if finding.fix is not None else ()
    edits = fix.edits_of.get(finding, [])
    return {
        "description": {"text": f"eaglelint fix --write: {'; '.join(w.action() for w in writes)}"},
        "artifactChanges": [{
            "artifactLocation": artifact(str(fix.path), root),
            "replacements": [replacement(lines, e.start, e.end, e.lines, fix.newline)
                             for e in sorted(edits, key=lambda e: (e.start, e.end))],
        }],
    }


def fixes_of(fix_plan: FixPlan | None, root: Path) -> dict[Finding, dict]:
    """Each finding the plan fixes, with its fix: the bytes `fix --write` writes, validated there."""
    return {f: sarif_fix(fix, f, root) for fix in (fix_plan.files if fix_plan else []) for f in fix.findings}


def _fix_order(f: Finding) -> tuple:
    """A sort key that keeps the findings' order (a stable sort), but for those of one class
    that carry fixes: first, in their fixes' order."""
    return f.path, f.line, f.column, f.fix is None, f.fix.rank if f.fix is not None else 0


def result(f: Finding, root: Path, rule_index: dict[str, int], fix: dict | None = None) -> dict:
    text = f.message
    if f.included_because:
        text += f" (checked because it {f.included_because})"
    text += "".join(f"\nhelp: {note}" for note in f.notes)  # the full text: SARIF viewers show every line
    out = {
        "ruleId": f.code,
        "ruleIndex": rule_index[f.code],
        "level": LEVELS[f.severity],
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact(f.path, root),
            "region": {"startLine": f.line, "startColumn": f.column},
        }}],
        "partialFingerprints": {FINGERPRINT: fingerprint(f, root)},
    }
    if f.wrapped_path and f.wrapped_line:
        out["relatedLocations"] = [{
            "id": 1,
            "physicalLocation": {"artifactLocation": artifact(f.wrapped_path, root),
                                 "region": {"startLine": f.wrapped_line}},
            "message": {"text": f"{f.method} of {f.provider_class}"},
        }]
    if f.included_because:
        out["properties"] = {"includedBecause": f.included_because}
    if fix is not None:
        out["fixes"] = [fix]
    return out


def sarif_log(findings: list[Finding], root: Path | None = None, fix_plan: FixPlan | None = None) -> dict:
    root = root or repo_root()
    fixes = fixes_of(fix_plan, root)
    codes = load_codes()
    rule_index = {code: i for i, code in enumerate(codes)}
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "eaglelint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": information_uri(),
                "rules": [rule_descriptor(rule) for rule in codes.values()],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri().rstrip("/") + "/"}},
            "columnKind": "unicodeCodePoints",
            "results": [result(f, root, rule_index, fixes.get(f)) for f in sorted(findings, key=_fix_order)],
        }],
    }


def write_sarif(findings: list[Finding], out: TextIO, root: Path | None = None,
                fix_plan: FixPlan | None = None) -> None:
    json.dump(sarif_log(findings, root, fix_plan), out, indent=2)
    out.write("\n")
