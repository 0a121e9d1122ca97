"""What the options every checking command shares mean: paths, settings, the cache.

`check` and `fix` (and `check --fix`) turn the same flags into the same run; keeping
that here leaves cli/main.py with the commands alone. A flag or config value a user got
wrong is a one-line message with exit 2 (UsageProblem, ConfigProblem), never a
traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from ..analysis.python.discover import checkout_models_dir, git_work_tree, installed_models_dir
from ..analysis.python.project import Project
from ..analysis.store.cache import DEFAULT_MAX_SIZE, SummaryCache, default_cache_dir
from ..config import (
    ConfigError,
    check_attributes,
    check_codes,
    check_interfaces,
    check_severities,
    parse_size,
    split_flag,
)
from ..findings import INTERNAL_ERROR, display_path
from ..fix.write_targets import ALLOW_FETCHED
from ..pipeline.lint import LintResult, SettingsFinder, lint


class UsageProblem(click.UsageError):
    """A mistake in how eaglelint was called (exit 2)."""


class ConfigProblem(click.ClickException):
    """A configuration file or value eaglelint cannot use: one line, no usage banner (exit 2)."""

    exit_code = 2


def target_paths(paths: tuple[Path, ...], installed: bool = False) -> list[Path]:
    """The given paths; with none, this checkout's models folder, and the installed sglang
    package's only where `installed` (check reads it; fix must never write into it). Which
    folder was chosen, and why, is said on stderr."""
    if paths:
        return list(paths)
    here = Path(os.path.abspath(Path.cwd()))
    top = git_work_tree(here)
    looked = (f"the working directory and the folders above it up to its git work tree's root {top}" if top
              else "the working directory only (it is in no git work tree, so no folder above it)")
    checkout = checkout_models_dir(here)
    if checkout is not None:
        found = checkout.models
        if found == here:
            why = "the working directory is an SGLang models folder"
        elif checkout.found_from == here:
            why = "the SGLang models folder under the working directory"
        elif checkout.found_from == found:
            why = f"the SGLang models folder the working directory is in, inside the git work tree {top}"
        else:
            why = (f"the SGLang models folder of {checkout.found_from}, the nearest folder above the working "
                   f"directory inside the git work tree {top}")
    elif installed and (package := installed_models_dir()) is not None:
        found, why = package, f"the installed sglang package; none in {looked}"
    else:
        nor = "; and no sglang package is installed" if installed else ""
        raise UsageProblem(
            "no PATH given and no SGLang models folder (python/sglang/srt/models, sglang/srt/models or "
            f"srt/models) in {looked}{nor}; pass the folder or files, e.g. `eaglelint check sglang/srt/models`")
    click.echo(f"eaglelint: no PATH given; checking {found} ({why})", err=True)
    return [found]


def settings_finder(opts: dict, **extra) -> SettingsFinder:
    """Settings from config files, with the flags that were given laid over them."""
    if opts["config"] and opts["isolated"]:
        raise UsageProblem("--config and --isolated exclude each other")
    try:
        overrides = {
            "select": _codes(opts["select"], "--select"),
            "ignore": _codes(opts["ignore"], "--ignore"),
            "extend_select": _codes(opts["extend_select"], "--extend-select"),
            "extend_ignore": _codes(opts["extend_ignore"], "--extend-ignore"),
            "fail_on": _checked(check_severities, opts["fail_on"], "--fail-on"),
            "exclude": split_flag(opts["exclude"]),
            "interfaces": _checked(check_interfaces, opts["interface"], "--interface"),
            "wrapper_attributes": _checked(check_attributes, opts["wrapper_attribute"], "--wrapper-attribute"),
            "dependents": opts["dependents"],
            "max_file_size": _size(opts["max_file_size"], "--max-file-size"),
            **extra,
        }
        return SettingsFinder(overrides, opts["config"], opts["isolated"])
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None


def _codes(values, flag: str):
    return _checked(check_codes, values, flag)


def _size(value: str | None, flag: str) -> int | None:
    try:
        return None if value is None else parse_size(value, flag)
    except ConfigError as exc:
        raise UsageProblem(str(exc)) from None


def _checked(check, values, flag: str):
    split = split_flag(values)
    return None if split is None else check(split, flag)


def make_project(opts: dict) -> Project:
    """The module index, with the persistent summary cache unless --no-cache or --debug
    (with --debug an internal error must recur, with its traceback, not come from the cache)."""
    no_cache, cache_dir, cache_max_size = opts["no_cache"], opts["cache_dir"], opts["cache_max_size"]
    ctx = click.get_current_context(silent=True)
    debug = bool(ctx and isinstance(ctx.obj, dict) and ctx.obj.get("debug"))
    sized = _size(cache_max_size, "--cache-max-size")
    bound = DEFAULT_MAX_SIZE if sized is None else sized
    if no_cache or debug:
        project = Project()
    else:
        project = Project(SummaryCache(cache_dir or default_cache_dir(), lambda m: click.echo(m, err=True), bound))
    project.debug = debug
    return project


def run_lint(paths: list[Path], finder: SettingsFinder, project: Project, progress=None,
             jobs: int = 1) -> LintResult:
    try:
        result = lint(paths, finder, project, progress, jobs=jobs)
    except ConfigError as exc:
        raise ConfigProblem(str(exc)) from None
    if project.cache is not None:
        project.cache.trim()
    if not result.files_checked and result.findings and all(f.code == INTERNAL_ERROR for f in result.findings):
        raise UsageProblem("nothing to check: " + "; ".join(f"{display_path(f.path)}: {f.message}"
                                                            for f in result.findings))
    return result


def relinter(paths: list[Path], finder: SettingsFinder, opts: dict) -> Callable[[], tuple[LintResult, Project]]:
    """A fresh run of the same paths and settings, as a fix repeats it after writing."""
    def again() -> tuple[LintResult, Project]:
        project = make_project(opts)
        return run_lint(paths, finder, project, jobs=opts["jobs"]), project

    return again


COMMON = [
    click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
    click.option("--config", type=click.Path(path_type=Path, dir_okay=False, exists=True), metavar="FILE",
                 help="Read settings from FILE (a pyproject.toml with [tool.eaglelint], or a TOML file of "
                      "the same keys) instead of the closest config."),
    click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
    click.option("--interface", multiple=True, metavar="PACK[,PACK]",
                 help="Interface packs from rules/ to check (default: the default packs, EAGLE-3)."),
    click.option("--wrapper-attribute", multiple=True, metavar="NAME",
                 help="Only this attribute holds the wrapped model (default: any attribute that holds a "
                      "language model providing members of the packs, and language_model)."),
    click.option("--select", multiple=True, metavar="CODE[,CODE]",
                 help="Only report these rule codes (a prefix such as EGL0, or ALL); replaces the config's."),
    click.option("--ignore", multiple=True, metavar="CODE[,CODE]",
                 help="Do not report these rule codes; replaces the config's ignore."),
    click.option("--extend-select", multiple=True, metavar="CODE[,CODE]",
                 help="Report these codes too, in addition to the config's select."),
    click.option("--extend-ignore", multiple=True, metavar="CODE[,CODE]",
                 help="Do not report these codes either, in addition to the config's ignore."),
    click.option("--fail-on", multiple=True, metavar="SEVERITY[,SEVERITY]",
                 help="Severities that make the exit code 1 (default: error,warning; info never fails)."),
    click.option("--exclude", multiple=True, metavar="GLOB[,GLOB]",
                 help="Skip files and folders matching these globs (replaces the config's exclude)."),
    click.option("--no-cache", is_flag=True, help="Do not read or write the summary cache."),
    click.option("--cache-dir", type=click.Path(path_type=Path), envvar="EAGLELINT_CACHE_DIR",
                 help="Summary cache folder (default: $XDG_CACHE_HOME/eaglelint)."),
    click.option("--cache-max-size", metavar="SIZE", envvar="EAGLELINT_CACHE_MAX_SIZE",
                 help="Bound on the cache folder; the oldest entries go first (default: 256MB)."),
    click.option("--max-file-size", metavar="SIZE",
                 help="Larger files are reported (EGL999), not read (default: 10MB; config: max-file-size)."),
    click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True, metavar="N",
                 callback=lambda ctx, param, value: value or default_jobs(),
                 help="Processes that summarise files on a cold run (0: one per CPU, at most 8); see "
                      "docs/speed.md."),
    click.option(ALLOW_FETCHED, "allow_fetched", is_flag=True,
                 help="Let --write, --fix and --add-noqa write into a release tree fetched by "
                      "scripts/fetch_sglang.py (refused otherwise: the tests read it as released)."),
    click.option("--dependents/--no-dependents", default=None,
                 help="Given files, also check wrappers in other files of the same models folder whose "
                      "wrapped class or bases live in them (default: on)."),
]


def default_jobs() -> int:
    """One worker per CPU this process may use, at most 8: a cold run of a whole models
    folder summarises about a hundred files, and more workers only wait for the biggest."""
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


def common(fn):
    for decorator in reversed(COMMON):
        fn = decorator(fn)
    return fn
