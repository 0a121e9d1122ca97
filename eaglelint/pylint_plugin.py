"""`pylint --load-plugins eaglelint.pylint_plugin`: eaglelint's findings as pylint messages.

Why a plugin and not a second checker: teams that already run pylint get the same
findings, from the same core (`lint.lint`, with `[tool.eaglelint]`, `# noqa` and
`# eaglelint: ignore[...]` honoured), in the report they already read. pylint's own
`# pylint: disable=egl001-missing-delegation` works too.

Each rule code becomes one pylint message: the symbol is `<code>-<name>`
(`egl001-missing-delegation`) and the text starts with the code, so either can be
searched for. pylint wants ids of the form `E8801`; the letter follows the
severity and the digits are derived from the code, stable while codes are only added.

pylint visits one file at a time, but a finding depends on other files: a subclass
elsewhere that inherits the gap ("inherited by YiVLForCausalLM (yivl.py)") and
decides `entry_class`. So the first file of a models folder has the whole folder
checked once, as `eaglelint check FOLDER` checks it, and each file is given its own
findings from that run.
"""

from __future__ import annotations

import os
from pathlib import Path

from pylint.checkers import BaseRawFileChecker

from .analysis.python.discover import tree_of
from .analysis.python.project import Project
from .config import ConfigError
from .findings import INTERNAL_ERROR, Finding
from .packs import load_codes
from .pipeline.lint import SettingsFinder, lint

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
        """One module index and one run per models folder, shared by every file pylint checks."""
        self._project = Project()
        self._finder = SettingsFinder()
        self._ids = message_ids()
        self._trees: dict[Path, dict[str, list[Finding]] | ConfigError] = {}

    def process_module(self, node) -> None:
        path = getattr(node, "file", None)
        if not path or not str(path).endswith(".py"):
            return
        if not hasattr(self, "_project"):
            self.open()
        found = self._tree_findings(Path(os.path.abspath(path)))
        if isinstance(found, ConfigError):  # shown once per file, as pylint shows a file it cannot parse
            self.add_message(self._ids[INTERNAL_ERROR], line=1, col_offset=0,
                             args=(f"{INTERNAL_ERROR} cannot check: {found}",))
            return
        for f in found.get(os.path.abspath(path), []):
            self.add_message(self._ids[f.code], line=f.line, col_offset=f.column - 1, args=(f"{f.code} {f.message}",))

    def _tree_findings(self, path: Path) -> dict[str, list[Finding]] | ConfigError:
        """Findings by file of the models folder holding `path` (outside one: its own folder)."""
        tree = tree_of(path)
        paths = [tree] if tree else sorted(path.parent.glob("*.py"))  # never a whole folder outside SGLang's
        tree = tree or path.parent
        if tree not in self._trees:
            try:
                by_file: dict[str, list[Finding]] = {}
                for f in lint(paths, self._finder, self._project, dependents=False).findings:
                    by_file.setdefault(os.path.abspath(f.path), []).append(f)
                self._trees[tree] = by_file
            except ConfigError as exc:
                self._trees[tree] = exc
        return self._trees[tree]


def register(linter) -> None:
    linter.register_checker(EaglelintChecker(linter))
