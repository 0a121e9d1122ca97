"""Interface packs and rule codes, loaded from the TOML data under `rules/`.

Why data: SGLang keeps adding calls on the model object; adding an interface must
mean adding a file, not editing the checker.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CALLED_ON = ("target", "draft")


class RulesError(Exception):
    """A rules file that is missing or malformed."""


@dataclass(frozen=True)
class InterfaceMethod:
    name: str
    returns_value: bool
    called_on: str
    call_site: str
    why: str
    interface: str


@dataclass(frozen=True)
class Interface:
    name: str
    title: str
    default: bool
    methods: tuple[InterfaceMethod, ...]


@dataclass(frozen=True)
class RuleCode:
    code: str
    name: str
    severity: str
    fixable: bool
    summary: str
    what: str
    why: str
    bad: str
    good: str


def rules_dir() -> Path:
    """`eaglelint/rules` inside a built wheel; the repository's `rules/` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "rules", here.parent / "rules"):
        if (candidate / "codes.toml").is_file():
            return candidate
    raise RulesError(f"rules folder not found next to {here}")


def _load(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RulesError(f"{path}: {exc}") from None


@cache
def load_interfaces() -> dict[str, Interface]:
    out: dict[str, Interface] = {}
    for path in sorted((rules_dir() / "interfaces").glob("*.toml")):
        data = _load(path)
        try:
            name = data["name"]
            methods = tuple(
                InterfaceMethod(
                    name=m["name"],
                    returns_value=bool(m["returns_value"]),
                    called_on=m["called_on"],
                    call_site=m["call_site"],
                    why=m.get("why", ""),
                    interface=name,
                )
                for m in data["methods"]
            )
        except (KeyError, TypeError) as exc:
            raise RulesError(f"{path}: missing or bad key {exc}") from None
        for m in methods:
            if m.called_on not in CALLED_ON:
                raise RulesError(f"{path}: {m.name}: called_on must be one of {CALLED_ON}")
        out[name] = Interface(name, data.get("title", name), bool(data.get("default")), methods)
    return out


def select_interfaces(names: list[str] | None) -> list[Interface]:
    available = load_interfaces()
    if not names:
        return [i for i in available.values() if i.default]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise RulesError(
            f"unknown interface {', '.join(unknown)}; available: {', '.join(sorted(available))}"
        )
    return [available[n] for n in names]


@cache
def load_codes() -> dict[str, RuleCode]:
    data = _load(rules_dir() / "codes.toml")
    return {
        code: RuleCode(code=code, **{k: (v.strip() if isinstance(v, str) else v) for k, v in entry.items()})
        for code, entry in data.items()
    }
