"""One run, as the CLI and the pylint plugin both need it: paths in, final findings out.

paths -> settings (closest config, flags over it) -> discover -> check -> findings
in files that depend on the given ones -> suppressions -> select / ignore /
per-file-ignores. Keeping this in one place is what makes `pylint
--load-plugins eaglelint.pylint_plugin` report exactly what `eaglelint check` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..analysis.python.discover import discover
from ..analysis.python.project import Project
from ..checks.run import CheckOptions, check_files
from ..config import ConfigError, Settings, find_config, load_settings
from ..findings import Finding, file_error
from ..packs import RulesError, pack_members, select_interfaces
from .suppressions import UNUSED_SUPPRESSION, Suppressor

Progress = Callable[[list[Path]], Iterable[Path]]


@dataclass
class LintResult:
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0
    style_of: dict[str, str] = field(default_factory=dict)  # display path -> fix style of its config
    settings: list[Settings] = field(default_factory=list)
    failing: int = 0  # findings whose severity their settings' fail-on names
    baselined: list[Finding] = field(default_factory=list)  # left out because the baseline holds them


class SettingsFinder:
    """Settings for each checked path: `--isolated`, else `--config FILE`, else the closest config."""

    def __init__(self, overrides: dict | None = None, config_file: Path | None = None, isolated: bool = False):
        self.overrides = overrides or {}
        self._fixed = Settings() if isolated else load_settings(config_file) if config_file else None
        self._loaded: dict[Path | None, Settings] = {}
        self._by_folder: dict[Path, Path | None] = {}
        self._by_dirname: dict[str, Settings] = {}

    def for_path(self, path: Path) -> Settings:
        if self._fixed is not None:
            return self._fixed.with_flags(self.overrides)
        path = Path(os.path.abspath(path))
        folder = path if path.is_dir() else path.parent
        if folder not in self._by_folder:
            self._by_folder[folder] = find_config(folder)
        found = self._by_folder[folder]
        if found not in self._loaded:
            self._loaded[found] = (load_settings(found) if found else Settings()).with_flags(self.overrides)
        return self._loaded[found]

    def for_file(self, file: Path) -> Settings:
        """for_path of a file discover() found (absolute, regular): settings go by folder, so
        a folder of 300 files costs one lookup, not 300 (a warm run is mostly such work)."""
        folder = os.path.dirname(file)
        if folder not in self._by_dirname:
            self._by_dirname[folder] = self.for_path(Path(folder))
        return self._by_dirname[folder]


@dataclass
class _Group:
    files: list[Path] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)
    explicit: list[Path] = field(default_factory=list)


def lint(paths: list[Path], finder: SettingsFinder | None = None, project: Project | None = None,
         progress: Progress | None = None, dependents: bool | None = None, jobs: int = 1) -> LintResult:
    """Findings for the given paths; ConfigError for a configuration that cannot be used.

    Each file is checked with the settings of its own closest config, as ruff does,
    so a folder argument may span several configurations.
    """
    finder = finder or SettingsFinder()
    project = project or Project()
    groups: dict[Settings, _Group] = {}
    seen: set[Path] = set()
    for path in paths:
        top = finder.for_path(path)
        found = discover([path], list(top.exclude))
        groups.setdefault(top, _Group()).errors += [file_error(p, r) for p, r in found.errors]
        for file in found.files:
            settings = finder.for_file(file)
            if file in seen or settings.excluded(file):
                continue
            seen.add(file)
            group = groups.setdefault(settings, _Group())
            group.files.append(file)
            if path.is_file():
                group.explicit.append(file)
    result = LintResult()
    for settings, group in groups.items():
        result.settings.append(settings)
        _lint_group(settings, group, project, progress, dependents, result, jobs)
    result.findings.sort(key=lambda f: (f.path, f.line, f.column, f.code, f.method or ""))
    return result


def _lint_group(settings: Settings, group: _Group, project: Project, progress: Progress | None,
                dependents: bool | None, result: LintResult, jobs: int = 1) -> None:
    files = group.files
    try:
        interfaces = select_interfaces(list(settings.interfaces) or None)
    except RulesError as exc:
        raise ConfigError(str(exc)) from None
    options = CheckOptions(tuple(interfaces), settings.wrapper_attributes, settings.style)
    project.max_file_size = settings.max_file_size
    # check_files reads its file list once, in order: the progress bar advances as it does
    checked = check_files(progress(files) if progress and files else files, options, project, jobs)
    raw = group.errors + checked.findings
    result.files_checked += checked.files_checked
    if (settings.dependents if dependents is None else dependents) and group.explicit:
        raw += _dependent_findings(settings, group.explicit, files, options, project, result)
    suppressor = Suppressor(settings.max_file_size, project)
    kept = [f for f in raw if not suppressor.suppressed(f)]
    if settings.report_unused_suppressions:
        kept += suppressor.unused(files)
    keep, drop = set(settings.select), set(settings.ignore)
    for f in kept:
        if f.code in drop or f.code in settings.ignored_here(Path(f.path)):
            continue
        if keep and f.code not in keep and f.code != UNUSED_SUPPRESSION:
            continue  # EGL900 is asked for by its own flag
        if settings.baseline and _in_baseline(f, settings.baseline):
            result.baselined.append(f)
            continue
        result.findings.append(f)
        result.failing += settings.fails(f.severity)
        result.style_of[f.path] = settings.style


def _in_baseline(finding: Finding, baseline: Path) -> bool:
    from .baseline import in_baseline  # loaded only by a run that has a baseline

    return in_baseline(finding, baseline)


def _dependent_findings(settings, explicit, files, options, project, result) -> list[Finding]:
    from ..analysis.sglang.dependents import (
        find_dependents,  # builds on the analysis, which a warm whole-tree run skips
    )

    found = [d for d in project.retrying(lambda: find_dependents(
                 explicit, set(files), settings.wrapper_attributes, project, members=pack_members(options.interfaces),
                 draft_members=pack_members(options.interfaces, "draft")))
             if not settings.excluded(d.path)]
    project.save()
    if not found:
        return []
    why = {(os.path.abspath(d.path), d.class_name): d.reason for d in found}
    checked = check_files(sorted({d.path for d in found}), options, project)
    result.files_checked += checked.files_checked
    return [replace(f, included_because=why[(os.path.abspath(f.path), f.class_name)])
            for f in checked.findings if (os.path.abspath(f.path), f.class_name) in why]
