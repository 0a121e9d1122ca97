"""SARIF 2.1.0 output, as GitHub code scanning reads it.

Why these fields: code scanning needs one `rules[]` entry per rule id to show the
rule's help, an artifact URI relative to the repository root to place the alert on
the file, and `partialFingerprints` to recognise an alert as the same one across
runs. The fingerprint hashes what identifies a finding (file, class, rule, method),
not its line, so an alert survives edits elsewhere in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path
from typing import TextIO
from urllib.parse import quote

from .. import __version__
from ..findings import Finding
from ..packs import RuleCode, load_codes

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


def result(f: Finding, root: Path, rule_index: dict[str, int]) -> dict:
    text = f.message
    if f.included_because:
        text += f" (checked because it {f.included_because})"
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
    return out


def sarif_log(findings: list[Finding], root: Path | None = None) -> dict:
    root = root or repo_root()
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
            "results": [result(f, root, rule_index) for f in findings],
        }],
    }


def write_sarif(findings: list[Finding], out: TextIO, root: Path | None = None) -> None:
    json.dump(sarif_log(findings, root), out, indent=2)
    out.write("\n")
