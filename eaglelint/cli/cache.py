"""`eaglelint clean`: remove the summary cache, as `ruff clean` does; `--all` also what the
demo and the tests fetched and built there.

Why a command and not "delete ~/.cache/eaglelint": the folder may be elsewhere
(`--cache-dir`, `EAGLELINT_CACHE_DIR`, `XDG_CACHE_HOME`), and only what eaglelint
wrote there may go: `--cache-dir .` must never cost a user their files.

What `--all` removes is what the repository's scripts keep beside the summary cache, by
the names they give it (tests/test_clean.py builds each with the scripts' own functions
and checks that it goes): the releases scripts/fetch_sglang.py fetched
(`$EAGLELINT_RELEASES`, else `releases/`), and the runtime tier's venvs, GPU archive
and wheels (scripts/runtime: `$EAGLELINT_RUNTIME_CACHE`, else the cache folder). Those
are most of the space: gigabytes, against megabytes of summaries.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import click

from ..analysis.store.cache import clean, default_cache_dir, remove_if_only_tagged, version_folders
from ..fix.write_targets import FETCHED_MARKER

# scripts/runtime: runtime_venv.py `venv_dir` (its lock file goes with it), gpu_carry.py `build_archive`
RUNTIME_ITEMS = (
    (re.compile(r"runtime-venv-[0-9a-f]{16}"), "runtime venv"),
    (re.compile(r"gpu-carry-[0-9a-f]{16}"), "GPU archive"),
    (re.compile(r"gpu-carry-[0-9a-f]{16}\.part"), "GPU archive, unfinished"),
    (re.compile(r"gpu-wheels"), "GPU wheels"),
)
LOCK = ".lock"  # beside a runtime venv: runtime_venv.py `ensure_venv`'s flock
RELEASES = "releases"  # scripts/fetch_sglang.py `cache_root`
RELEASE_WHEELS = "wheels"


def disk_usage(path: Path) -> int:
    """Bytes `path` takes on disk (as `du`), links not followed."""
    try:
        info = path.lstat()
    except OSError:
        return 0
    total = info.st_blocks * 512
    if path.is_dir() and not path.is_symlink():
        for folder, dirs, files in os.walk(path):
            for name in dirs + files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"


def _env_or(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value) if value else default


def tier_items() -> list[tuple[Path, str]]:
    """What the demo and the tests keep beside the summary cache: fetched releases, the
    runtime tier's venvs, archive and wheels; (path, what it is)."""
    home = default_cache_dir()
    releases = _env_or("EAGLELINT_RELEASES", home / RELEASES)
    runtime = _env_or("EAGLELINT_RUNTIME_CACHE", home)
    items: list[tuple[Path, str]] = []
    for folder in sorted(_children(releases)):
        if folder.name == RELEASE_WHEELS and folder.is_dir() and not folder.is_symlink():
            items.append((folder, "release wheels"))
        elif not folder.is_symlink() and ((folder / FETCHED_MARKER).is_file() or (folder / ".complete").is_file()):
            items.append((folder, "fetched release"))
    for entry in sorted(_children(runtime)):
        label = next((what for pattern, what in RUNTIME_ITEMS if pattern.fullmatch(entry.name)), None)
        if label and entry.is_dir() and not entry.is_symlink():
            items.append((entry, label))
    return items


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


@click.command("clean")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="EAGLELINT_CACHE_DIR",
              help="Summary cache folder (default: $XDG_CACHE_HOME/eaglelint).")
@click.option("--all", "everything", is_flag=True,
              help="Also remove the releases fetched for the demo and the tests, and the runtime tier's venvs, "
                   "GPU archive and wheels.")
def clean_cmd(cache_dir: Path | None, everything: bool) -> None:
    """Remove the summary cache (every eaglelint version's folder in it); with --all, also
    the fetched releases and the runtime tier's venvs and archive. Each item removed is
    printed with its size; without --all, what is kept is listed too.

    \b
    Examples:
      eaglelint clean
      eaglelint clean --all
      eaglelint clean --cache-dir .eaglelint-cache
    """
    root = cache_dir or default_cache_dir()
    summaries = [(folder, "summary cache") for folder in version_folders(root)]
    extra = tier_items()
    removed = summaries + (extra if everything else [])
    sizes = {path: disk_usage(path) for path, _ in removed + extra}
    import shutil  # here, not at the top: every command would pay for its import

    try:
        clean(root)
        for path, _ in extra if everything else []:
            shutil.rmtree(path)
            path.with_name(path.name + LOCK).unlink(missing_ok=True)
        if everything:
            for folder in {path.parent for path, _ in extra}:
                if folder.name == RELEASES and not _children(folder):
                    folder.rmdir()
            remove_if_only_tagged(root)
    except OSError as exc:
        raise click.ClickException(f"cannot remove {exc.filename or root}: {exc.strerror or exc}") from None
    if removed:
        click.echo("Removed:")
        for path, what in removed:
            click.echo(f"  {human(sizes[path]):>9}  {what:<23}  {path}")
        click.echo(f"Freed {human(sum(sizes[p] for p, _ in removed))}.")
    else:
        click.echo(f"No eaglelint cache at {root}.")
    if not everything and extra:
        kept = sum(sizes[p] for p, _ in extra)
        click.echo(f"Kept {human(kept)} that the demo and the tests fetched and built "
                   f"({len(extra)} items: {', '.join(sorted({what for _, what in extra}))}); "
                   "`eaglelint clean --all` removes them too.")
