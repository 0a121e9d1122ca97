"""Import every module of sglang.srt.models as SGLang's model registry does; report each outcome as JSON.

Run by tests/runtime twice per release, on the release and on the copy that
`eaglelint fix --write` edited: a fix that broke a module at import time (a
name it used but did not import, a bad indentation) shows up as a module the
release imports and the fixed copy does not.

    python probe_imports.py OUT.json
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))
import standins

standins.install()


def main() -> None:
    import sglang.srt.models as models

    outcomes = {}
    for info in pkgutil.iter_modules(models.__path__, models.__name__ + "."):
        if info.ispkg:
            continue
        try:
            importlib.import_module(info.name)
            outcomes[info.name] = "ok"
        except Exception as exc:  # the registry logs and skips these too
            outcomes[info.name] = type(exc).__name__
    Path(sys.argv[1]).write_text(json.dumps({"models_dir": list(models.__path__)[0], "outcomes": outcomes}, indent=1))


if __name__ == "__main__":
    main()
