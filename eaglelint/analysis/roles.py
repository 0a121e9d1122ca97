"""Roles: which registered classes SGLang only ever loads as draft models.

Why: the engine calls target-side members (`set_eagle3_layers_to_capture`) on the
served target only; a draft class lacking them is no gap. How SGLang loads a draft
decides the role, so it is read from there: `configs/model_config.py` rewrites the
target's architecture for the draft (`self.hf_config.architectures[0] =
"Qwen3MoeForCausalLMMTP"` when is_draft_model), and EAGLE/EAGLE-3/DFlash draft
checkpoints name draft classes that SGLang names by their role.
"""

from __future__ import annotations

import re
from pathlib import Path

from .resolve import ClassEntity
from .sources import SourceError, read_source

_REMAPPED = re.compile(r"architectures\[0\]\s*=\s*[\"'](\w+)[\"']")
_DRAFT_NAME = re.compile(r"NextN|MTP|Eagle|DFlash|DSpark|Draft")
_remapped: dict[str, frozenset[str]] = {}


def is_draft(cls: ClassEntity) -> bool:
    """A class the engine loads only as a draft model."""
    return is_draft_name(cls.qualname.rsplit(".", 1)[-1], Path(cls.path))


def is_draft_name(name: str, path: Path) -> bool:
    """As is_draft, from a class name and the file that defines it (no parsing needed)."""
    if _DRAFT_NAME.search(name):
        return True
    config = str(Path(path).parent.parent / "configs" / "model_config.py")
    if config not in _remapped:
        try:
            _remapped[config] = frozenset(_REMAPPED.findall(read_source(Path(config)).text))
        except SourceError:
            _remapped[config] = frozenset()
    return name in _remapped[config]
