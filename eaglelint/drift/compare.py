"""Compare what an SGLang tree's engine uses on the model object with the interface packs.

Why drift is an exit code: a fork's CI runs `eaglelint interfaces` against the SGLang
it ships; a name the engine starts using that no pack covers (and that
rules/engine.toml does not list as known) fails the build the day it appears, and a
pack entry the engine stopped using says the pack is stale.

`release_version` reads `sglang/_version.py` itself (not through analysis/python/project.py):
engine metadata, as drift/scan.py reads the engine's files, never a checked model file.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..analysis.syntax.sources import SourceError, parse_source, read_source
from ..packs import Interface, InterfaceMethod
from .scan import EngineName, EngineScan, ScanRules


@dataclass
class Drift:
    uncovered: list[EngineName] = field(default_factory=list)  # used, in no pack, not known
    unused: list[InterfaceMethod] = field(default_factory=list)  # in a pack, not used by this release
    not_yet: list[InterfaceMethod] = field(default_factory=list)  # in a pack, newer than this release

    @property
    def found(self) -> bool:
        return bool(self.uncovered or self.unused)


def locate_root(path: Path | None, cwd: Path | None = None) -> Path | None:
    """The folder that holds `sglang/`: from PATH (itself, a checkout, the package, srt/),
    else the installed sglang (found, never imported), else a checkout in the working directory."""
    if path is not None:
        for candidate in (path, path / "python", path.parent, path.parent.parent):
            if (candidate / "sglang" / "srt").is_dir():
                return candidate
        return None
    try:
        spec = importlib.util.find_spec("sglang")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "srt").is_dir():
            return Path(location).parent
    cwd = cwd or Path.cwd()
    return next((c for c in (cwd / "python", cwd) if (c / "sglang" / "srt").is_dir()), None)


def release_version(root: Path) -> str | None:
    """`__version__` written literally in sglang/_version.py (wheels) or sglang/version.py."""
    for name in ("_version.py", "version.py"):
        try:
            tree = parse_source(read_source(root / "sglang" / name))
        except SourceError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                targets = {t.id for t in node.targets if isinstance(t, ast.Name)}
                if "__version__" in targets and isinstance(node.value.value, str):
                    return node.value.value
    return None


def version_key(version: str) -> tuple[int, ...]:
    """0.5.10.post1 -> (0, 5, 10, 1): enough to order SGLang releases."""
    return tuple(int(n) for n in re.findall(r"\d+", version))


def _packs_by_name(interfaces: list[Interface]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for iface in interfaces:
        if iface.engine == "sglang":
            for m in iface.methods:
                out.setdefault(m.name, []).append(iface.name)
    return out


def compare(scan: EngineScan, interfaces: list[Interface], rules: ScanRules) -> Drift:
    drift = Drift()
    covered = _packs_by_name(interfaces)
    for name in sorted(scan.names):
        if name not in covered and name not in rules.known and name not in rules.ignore:
            drift.uncovered.append(scan.names[name])
    for iface in interfaces:
        if iface.engine != "sglang":
            continue
        for m in iface.methods:
            if m.name in scan.names:
                continue
            newer = scan.version and m.since and version_key(scan.version) < version_key(m.since)
            (drift.not_yet if newer else drift.unused).append(m)
    return drift


def _site_text(site) -> str:
    guarded = " (guarded)" if site.guarded and site.how in ("call", "read") else ""
    return f"{site.path}:{site.line} {site.how}{guarded}"


def write_text(scan: EngineScan, drift: Drift, interfaces: list[Interface], rules: ScanRules, out: TextIO) -> None:
    covered = _packs_by_name(interfaces)
    shown = [n for name, n in sorted(scan.names.items()) if name not in rules.ignore]
    left_out = len(scan.names) - len(shown)
    out.write(f"SGLang {scan.version or '(version unknown)'} at {scan.root}: {scan.files} files scanned, "
              f"{len(shown)} names used on the model object ({left_out} generic torch.nn.Module names left out, "
              f"see rules/engine.toml)\n\n")
    for n in shown:
        where = ", ".join(covered.get(n.name, [])) or ("known" if n.name in rules.known else "NO PACK")
        need = "required" if n.required else "optional"
        out.write(f"{n.name}  {need}  on {n.on} model  [{where}]\n")
        for site in n.sites:
            out.write(f"    {_site_text(site)}\n")
    for path, reason in scan.errors:
        out.write(f"\nnot scanned: {path}: {reason}\n")
    out.write("\n")
    if drift.uncovered:
        out.write("Drift: names the engine uses that no selected pack covers (add them to a pack in "
                  "rules/interfaces/, or to [[known]] in rules/engine.toml with the reason):\n")
        for n in drift.uncovered:
            need = "required" if n.required else "optional"
            out.write(f"  {n.name} ({need}, on {n.on} model; {_site_text(n.sites[0])})\n")
    if drift.unused:
        out.write("Drift: pack entries this engine does not use:\n")
        for m in drift.unused:
            out.write(f"  {m.interface}.{m.name} (since {m.since or '?'})\n")
    for m in drift.not_yet:
        out.write(f"Not yet used by this release: {m.interface}.{m.name} (since {m.since})\n")
    if not drift.found:
        out.write("No drift: every name is covered by a selected pack or known, and every pack entry "
                  "this release should use is used.\n")


def to_json(scan: EngineScan, drift: Drift, interfaces: list[Interface], rules: ScanRules) -> dict:
    covered = _packs_by_name(interfaces)
    return {
        "root": str(scan.root),
        "version": scan.version,
        "files": scan.files,
        "names": [
            {
                "name": n.name, "required": n.required, "on": n.on,
                "interfaces": covered.get(n.name, []), "known": rules.known.get(n.name),
                "sites": [{"path": s.path, "line": s.line, "how": s.how, "guarded": s.guarded, "on": s.on}
                          for s in n.sites],
            }
            for name, n in sorted(scan.names.items()) if name not in rules.ignore
        ],
        "ignored": sorted(n for n in scan.names if n in rules.ignore),
        "drift": {
            "uncovered": [n.name for n in drift.uncovered],
            "unused": [{"interface": m.interface, "name": m.name, "since": m.since} for m in drift.unused],
            "not_yet": [{"interface": m.interface, "name": m.name, "since": m.since} for m in drift.not_yet],
        },
        "errors": [{"path": p, "reason": r} for p, r in scan.errors],
    }
