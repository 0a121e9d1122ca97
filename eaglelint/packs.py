"""Interface packs and rule codes, loaded from the TOML data under `rules/`.

Why data: SGLang keeps adding calls on the model object; adding an interface must
mean adding a file, not editing the checker.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

CALLED_ON = ("target", "draft")
KINDS = ("method", "property", "attribute")
ENGINES = ("sglang", "vllm")
# what an entry of rules/normal_path.toml tests: `x.name` ("attr"), `x.name(...)`
# ("call_attr"), `isinstance(x, C)` where a class named in C contains name
TRUTH_KINDS = ("attr", "call_attr", "isinstance_class_contains")


class RulesError(Exception):
    """A rules file that is missing or malformed."""


@dataclass(frozen=True)
class InterfaceMethod:
    """One member of an interface pack: a method, a property or a plain attribute."""

    name: str
    returns_value: bool
    called_on: str
    call_site: str
    why: str
    interface: str
    kind: str = "method"
    required: bool = True  # False: the engine tests for it (hasattr/getattr) and copes without it
    since: str = ""  # first SGLang release checked whose engine uses it
    link: str = ""  # the call site in that engine, at a release tag


@dataclass(frozen=True)
class Interface:
    name: str
    title: str
    default: bool
    methods: tuple[InterfaceMethod, ...]  # every member, whatever its kind
    engine: str = "sglang"
    marker: str = ""  # vllm: the protocol class a wrapper must list in its bases


@dataclass(frozen=True)
class EngineTruth:
    """A test whose value the engine fixes on the normal path (rules/normal_path.toml)."""

    kind: str  # one of TRUTH_KINDS
    name: str
    value: bool
    why: str = ""
    # decided by the pipeline rank: `value` holds on the last rank, the other value on every
    # rank before it (a fix asks where a forward's code runs on the last rank only)
    rank: bool = False


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
    fix: str = ""  # what `eaglelint fix` writes, and what each style does
    # for the tests that run bad and good: the code around a snippet ("{example}" marks
    # where it goes) and the interface packs it is checked with
    example_context: str = ""
    example_interface: str = ""


def rules_dir() -> Path:
    """`eaglelint/rules` inside a built wheel; the repository's `rules/` in a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "rules", here.parent / "rules"):
        if (candidate / "codes.toml").is_file():
            return candidate
    raise RulesError(f"rules folder not found next to {here}")


def load_toml(path: Path) -> dict:
    """A rules file as a dict; a missing or malformed one is a RulesError."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RulesError(f"{path}: {exc}") from None


@cache
def load_interfaces() -> dict[str, Interface]:
    out: dict[str, Interface] = {}
    for path in sorted((rules_dir() / "interfaces").glob("*.toml")):
        data = load_toml(path)
        out[data.get("name", path.stem)] = _interface(path, data)
    return out


def _interface(path: Path, data: dict) -> Interface:
    """`[[members]]` entries (`[[methods]]` is read too: every entry there is a method)."""
    try:
        name = data["name"]
        entries = [dict(m, kind=m.get("kind", "method")) for m in data.get("members", [])]
        entries += [dict(m, kind="method") for m in data.get("methods", [])]
        members = tuple(
            InterfaceMethod(
                name=m["name"], returns_value=bool(m.get("returns_value", m["kind"] != "method")),
                called_on=m["called_on"], call_site=m["call_site"], why=m.get("why", ""), interface=name,
                kind=m["kind"], required=bool(m.get("required", True)), since=str(m.get("since", "")),
                link=m.get("link", ""),
            )
            for m in entries
        )
        iface = Interface(name, data.get("title", name), bool(data.get("default")), members,
                          data.get("engine", "sglang"), data.get("marker", ""))
    except (KeyError, TypeError, AttributeError) as exc:
        raise RulesError(f"{path}: missing or bad key {exc}") from None
    if iface.engine not in ENGINES:
        raise RulesError(f"{path}: engine must be one of {ENGINES}")
    for m in members:
        if m.called_on not in CALLED_ON:
            raise RulesError(f"{path}: {m.name}: called_on must be one of {CALLED_ON}")
        if m.kind not in KINDS:
            raise RulesError(f"{path}: {m.name}: kind must be one of {KINDS}")
    return iface


@cache
def load_normal_truths(engine: str) -> tuple[EngineTruth, ...]:
    """The engine's table from rules/normal_path.toml: what holds where a forward makes logits."""
    path = rules_dir() / "normal_path.toml"
    data = load_toml(path)
    if engine not in ENGINES or set(data) - set(ENGINES):
        raise RulesError(f"{path}: tables must be among {ENGINES}")
    out = []
    for entry in data.get(engine, []):
        try:
            truth = EngineTruth(entry["kind"], entry["name"], entry["value"], entry.get("why", "").strip(),
                                entry.get("rank", False))
        except (KeyError, TypeError) as exc:
            raise RulesError(f"{path}: [[{engine}]]: missing or bad key {exc}") from None
        if truth.kind not in TRUTH_KINDS or not isinstance(truth.value, bool) \
                or not isinstance(truth.name, str) or not truth.name or not isinstance(truth.rank, bool):
            raise RulesError(f"{path}: [[{engine}]] {truth.name!r}: kind must be one of {TRUTH_KINDS}, "
                             f"name a non-empty string, value and rank true or false")
        out.append(truth)
    return tuple(out)


def select_interfaces(names: list[str] | None) -> list[Interface]:
    """The default packs, or the named ones (any number; `all` is every SGLang pack)."""
    available = load_interfaces()
    if not names:
        return [i for i in available.values() if i.default]
    if "all" in names:
        names = [n for n in names if n != "all"] + [n for n, i in available.items() if i.engine == "sglang"]
    unknown = [n for n in names if n not in available]
    if unknown:
        raise RulesError(
            f"unknown interface {', '.join(unknown)}; available: {', '.join(sorted(available))}, all"
        )
    return [available[n] for n in dict.fromkeys(names)]


def _fields(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.strip() if isinstance(v, str) else v) for k, v in entry.items()}


@cache
def load_codes() -> dict[str, RuleCode]:
    data = load_toml(rules_dir() / "codes.toml")
    return {
        code: RuleCode(code=code, **_fields(entry))
        for code, entry in data.items()
    }


def sglang_members(interfaces: tuple[Interface, ...]) -> list[InterfaceMethod]:
    """One entry per member name of the SGLang packs; the strictest use wins (target, then required)."""
    by_name: dict[str, InterfaceMethod] = {}
    for iface in interfaces:
        for m in iface.methods if iface.engine == "sglang" else ():
            old = by_name.get(m.name)
            if old is None or (m.called_on == "target", m.required) > (old.called_on == "target", old.required):
                by_name[m.name] = m
    return list(by_name.values())


def pack_members(interfaces: tuple[Interface, ...], called_on: str | None = None) -> tuple[str, ...]:
    """The member names of the selected SGLang packs (those the engine calls on `called_on`
    models, if given): what makes a held class a language model."""
    return tuple(m.name for m in sglang_members(interfaces) if called_on in (None, m.called_on))
