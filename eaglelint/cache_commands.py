"""`eaglelint clean`: remove the summary cache, as `ruff clean` does.

Why a command and not "delete ~/.cache/eaglelint": the folder may be elsewhere
(`--cache-dir`, `EAGLELINT_CACHE_DIR`, `XDG_CACHE_HOME`), and only what eaglelint
wrote there may go: `--cache-dir .` must never cost a user their files.
"""

from __future__ import annotations

from pathlib import Path

import click

from .analysis.cache import clean, default_cache_dir


@click.command("clean")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="EAGLELINT_CACHE_DIR",
              help="Summary cache folder (default: $XDG_CACHE_HOME/eaglelint).")
def clean_cmd(cache_dir: Path | None) -> None:
    """Remove the summary cache (every eaglelint version's folder in it).

    \b
    Examples:
      eaglelint clean
      eaglelint clean --cache-dir .eaglelint-cache
    """
    root = cache_dir or default_cache_dir()
    try:
        removed = clean(root)
    except OSError as exc:
        raise click.ClickException(f"cannot remove the cache at {root}: {exc.strerror or exc}") from None
    folders = [p for p in removed if p != root]
    if folders:
        click.echo(f"Removed {len(folders)} cache folder{'s' if len(folders) != 1 else ''} from {root}.")
    else:
        click.echo(f"No eaglelint cache at {root}.")
