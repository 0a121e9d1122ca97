"""`[tool.eaglelint]` in pyproject.toml: found by walking up from the checked paths.

Why like ruff: the people who keep an SGLang fork already configure ruff this
way, so the closest pyproject.toml that has a `[tool.eaglelint]` table wins (one
without the table is passed over), command-line flags override it, `--config FILE`
names the file and `--isolated` ignores them all. An `eaglelint.toml` or
`.eaglelint.toml` (keys at the top level, as ruff's `ruff.toml`) beside a
pyproject.toml wins over it. A typo in a key must not be silently ignored: every
unknown key or bad value is an error naming file and key.
"""

from __future__ import annotations

import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from .analysis.syntax.sources import DEFAULT_MAX_FILE_SIZE
from .fix.styles import DEFAULT_STYLE, STYLES
from .packs import load_codes, load_interfaces

SEVERITIES = ("error", "warning", "info")
DEFAULT_FAIL_ON = ("error", "warning")  # an info finding has nothing to fix: it must not block a commit
OWN_CONFIG_FILES = (".eaglelint.toml", "eaglelint.toml")
ALL_CODES = "ALL"


class ConfigError(Exception):
    """A configuration file or value eaglelint cannot use; str() names the file and key."""


@dataclass(frozen=True)
class Settings:
    """Everything a run can be configured with; () means "not set" for the code lists."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    interfaces: tuple[str, ...] = ()
    wrapper_attributes: tuple[str, ...] = ()  # () finds wrappers by what they hold; given, only these
    style: str = DEFAULT_STYLE
    dependents: bool = True
    report_unused_suppressions: bool = False
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    baseline: Path | None = None
    max_file_size: int = DEFAULT_MAX_FILE_SIZE  # bytes; a larger file is an EGL999, never read
    root: Path = field(default_factory=Path.cwd)  # globs are relative to it
    source: Path | None = None  # the file these settings came from

    def override(self, **values) -> Settings:
        """The same settings with every value that is not None replaced (command-line flags)."""
        return replace(self, **{k: v for k, v in values.items() if v is not None})

    def with_flags(self, flags: dict) -> Settings:
        """Flags laid over these settings: `select`/`ignore` replace the config's lists,
        `extend_select`/`extend_ignore` add to them (as in ruff). An extended code is
        also taken out of the config's `ignore`, since the later, narrower word wins."""
        flags = dict(flags)
        more, less = flags.pop("extend_select", None) or (), flags.pop("extend_ignore", None) or ()
        out = self.override(**flags)
        if more:
            select = tuple(dict.fromkeys(out.select + more)) if out.select else ()
            out = replace(out, select=select, ignore=tuple(c for c in out.ignore if c not in more))
        if less:
            out = replace(out, ignore=tuple(dict.fromkeys(out.ignore + less)))
        return out

    def fails(self, severity: str) -> bool:
        return severity in self.fail_on

    def ignored_here(self, path: Path) -> set[str]:
        """Codes that per-file-ignores switches off for this file."""
        return {code for pattern, codes in self.per_file_ignores if path_matches(path, pattern, self.root)
                for code in codes}

    def excluded(self, path: Path) -> bool:
        return any(path_matches(path, pattern, self.root) for pattern in self.exclude)


def split_flag(values: tuple[str, ...]) -> tuple[str, ...] | None:
    """Comma-separated, repeatable flag values; None when the flag was not given."""
    out = tuple(v.strip() for value in values for v in value.split(",") if v.strip())
    return out or None


def path_matches(path: Path, pattern: str, root: Path) -> bool:
    """A glob against the path relative to the config's folder, or its tail, or its name."""
    absolute = Path(os.path.abspath(path))
    text = absolute.as_posix()
    try:
        relative = absolute.relative_to(Path(os.path.abspath(root))).as_posix()
    except ValueError:
        relative = text
    return any(fnmatch.fnmatch(candidate, pattern) or fnmatch.fnmatch(candidate, pattern.rstrip("/") + "/*")
               for candidate in (relative, text, absolute.name)) or fnmatch.fnmatch(text, f"*/{pattern}")


def find_config(path: Path) -> Path | None:
    """The closest config from `path` upward: an `.eaglelint.toml` or `eaglelint.toml`, else a
    pyproject.toml that has a `[tool.eaglelint]` table."""
    start = Path(os.path.abspath(path))
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        for name in OWN_CONFIG_FILES:
            if (folder / name).is_file():
                return folder / name
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "eaglelint" in _read(candidate).get("tool", {}):
            return candidate
    return None


def load_settings(path: Path) -> Settings:
    """Settings from a pyproject.toml (`[tool.eaglelint]`) or a file of its own (top-level keys)."""
    data = _read(path)
    if "eaglelint" in data.get("tool", {}):
        table, where = data["tool"]["eaglelint"], "[tool.eaglelint]"
    elif path.name == "pyproject.toml":
        raise ConfigError(f"{path}: has no [tool.eaglelint] table")
    else:
        table, where = data, "top level"
    return parse_table(table, path, where)


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


KEYS = {
    "select": "select", "ignore": "ignore", "exclude": "exclude", "per-file-ignores": "per_file_ignores",
    "interfaces": "interfaces", "wrapper-attributes": "wrapper_attributes", "fix": None,
    "dependents": "dependents", "report-unused-suppressions": "report_unused_suppressions",
    "fail-on": "fail_on", "baseline": "baseline",
    "max-file-size": "max_file_size",
}


def parse_table(table: dict, path: Path, where: str = "[tool.eaglelint]") -> Settings:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    values: dict = {"root": Path(os.path.abspath(path)).parent, "source": path}
    for key, value in table.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: {where}: unknown key {key!r} (known: {', '.join(KEYS)})")
        problem = f"{path}: {where}: {key}"
        if key in ("select", "ignore"):
            values[KEYS[key]] = check_codes(_strings(value, problem), problem)
        elif key in ("exclude", "wrapper-attributes"):
            values[KEYS[key]] = _strings(value, problem)
            if key == "wrapper-attributes":
                check_attributes(values[KEYS[key]], problem)
        elif key == "interfaces":
            values["interfaces"] = check_interfaces(_strings(value, problem), problem)
        elif key == "per-file-ignores":
            values["per_file_ignores"] = _per_file_ignores(value, problem)
        elif key == "fix":
            values["style"] = _fix_table(value, problem)
        elif key == "fail-on":
            values["fail_on"] = check_severities(_strings(value, problem), problem)
        elif key == "baseline":
            values["baseline"] = values["root"] / _file_name(value, problem)
        elif key == "max-file-size":
            values["max_file_size"] = parse_size(value, problem)
        else:
            if not isinstance(value, bool):
                raise ConfigError(f"{problem}: must be true or false, not {value!r}")
            values[KEYS[key]] = value
    return Settings(**values)


def _per_file_ignores(value, problem: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(f"{problem}: must be a table of glob = [codes]")
    return tuple((glob, check_codes(_strings(codes, f"{problem}.{glob}"), f"{problem}.{glob}"))
                 for glob, codes in value.items())


def _file_name(value, problem: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{problem}: must be a file name, not {value!r}")
    return value


def _fix_table(value, problem: str) -> str:
    if not isinstance(value, dict):
        raise ConfigError(f"{problem}: must be a table ([tool.eaglelint.fix])")
    unknown = set(value) - {"style"}
    if unknown:
        raise ConfigError(f"{problem}: unknown key {sorted(unknown)[0]!r} (known: style)")
    style = value.get("style", DEFAULT_STYLE)
    if style not in STYLES:
        raise ConfigError(f"{problem}.style: must be one of {', '.join(STYLES)}, not {style!r}")
    return style


def _strings(value, problem: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{problem}: must be a list of non-empty strings, not {value!r}")
    return tuple(v.strip() for v in value)


_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
          "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


def parse_size(value, problem: str) -> int:
    """A size in bytes from 1048576, "1MB" or "1 MiB" (K, M, G are powers of 1024, as `du -h` counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", value) if isinstance(value, str) else None
    if match is None or match[2].lower() not in _UNITS or int(match[1]) == 0:
        raise ConfigError(f"{problem}: must be a size such as 10MB or 1048576, not {value!r}")
    return int(match[1]) * _UNITS[match[2].lower()]


def check_codes(codes: tuple[str, ...], problem: str) -> tuple[str, ...]:
    """Rule codes, each given whole, as a prefix (`EGL0`: every code it starts) or `ALL`."""
    known = load_codes()
    out: list[str] = []
    for selector in (c.upper() for c in codes):
        matched = list(known) if selector == ALL_CODES else [c for c in known if c.startswith(selector)]
        if not matched:
            raise ConfigError(f"{problem}: unknown rule code {selector!r}; see `eaglelint rules`")
        out += matched
    return tuple(dict.fromkeys(out))


def check_severities(values: tuple[str, ...], problem: str) -> tuple[str, ...]:
    for value in values:
        if value not in SEVERITIES:
            raise ConfigError(f"{problem}: unknown severity {value!r} (known: {', '.join(SEVERITIES)})")
    return values


def check_interfaces(names: tuple[str, ...], problem: str) -> tuple[str, ...]:
    available = load_interfaces()
    for name in names:
        if name not in available and name != "all":
            raise ConfigError(f"{problem}: unknown interface {name!r}; available: {', '.join(sorted(available))}")
    return names


def check_attributes(names: tuple[str, ...], problem: str) -> tuple[str, ...]:
    for name in names:
        if not name.isidentifier():
            raise ConfigError(f"{problem}: {name!r} is not a Python attribute name")
    return names

