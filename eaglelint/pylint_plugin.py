"""`pylint --load-plugins eaglelint.pylint_plugin`: eaglelint's findings as pylint messages.

Why a plugin and not a second checker: teams that already run pylint get the same
findings, from the same core (`lint.lint`, with `[tool.eaglelint]`, `# noqa` and
`# eaglelint: ignore[...]` honoured), in the report they already read. pylint's own
`# pylint: disable=egl001-missing-delegation` works too.

Each rule code becomes one pylint message: the symbol is `<code>-<name>`
(`egl001-missing-delegation`) and the text starts with the code, so either can be
searched for. pylint wants ids of the form `E8801`; the letter follows the
severity and the digits are derived from the code, stable while codes are only added.
"""

from __future__ import annotations

import os
from pathlib import Path

from pylint.checkers import BaseRawFileChecker

from .config import ConfigError
from .interfaces import load_codes
from .lint import SettingsFinder, lint
from .modules import Project

CHECKER_DIGITS = "88"
LETTER = {"error": "E", "warning": "W", "info": "I"}


def message_ids() -> dict[str, str]:
    """Rule code -> pylint message id (`EGL001` -> `E8801`, `EGL999` -> `E8899`)."""
    out: dict[str, str] = {}
    used: set[int] = set()
    for code, rule in sorted(load_codes().items()):
        number = int(code[3:]) % 100
        while number in used:
            number = (number + 1) % 100
        used.add(number)
        out[code] = f"{LETTER[rule.severity]}{CHECKER_DIGITS}{number:02d}"
    return out


def symbol(code: str) -> str:
    return f"{code.lower()}-{load_codes()[code].name}"


def _messages() -> dict:
    codes = load_codes()
    return {
        msgid: ("%s", symbol(code), f"{codes[code].summary}. See `eaglelint rule {code}`.")
        for code, msgid in message_ids().items()
    }


class EaglelintChecker(BaseRawFileChecker):
    name = "eaglelint"
    msgs = _messages()

    def open(self) -> None:
        """One module index per pylint run, shared by every file it checks."""
        self._project = Project()
        self._finder = SettingsFinder()
        self._ids = message_ids()

    def process_module(self, node) -> None:
        path = getattr(node, "file", None)
        if not path or not str(path).endswith(".py"):
            return
        if not hasattr(self, "_project"):
            self.open()
        try:
            findings = lint([Path(path)], self._finder, self._project, dependents=False).findings
        except ConfigError as exc:  # shown once per file, as pylint shows a file it cannot parse
            self.add_message(self._ids["EGL999"], line=1, col_offset=0, args=(f"EGL999 cannot check: {exc}",))
            return
        for f in findings:
            if os.path.abspath(f.path) != os.path.abspath(path):
                continue  # a module only a resolution reached: pylint reports it when it lints that file
            self.add_message(self._ids[f.code], line=f.line, col_offset=f.column - 1, args=(f"{f.code} {f.message}",))


def register(linter) -> None:
    linter.register_checker(EaglelintChecker(linter))
