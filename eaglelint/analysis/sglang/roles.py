"""Roles by name: which registered classes SGLang names or remaps as draft models.

Why: the engine calls target-side members (`set_eagle3_layers_to_capture`) on the
served target only; a draft class lacking them is no gap. What a class does decides
its role (drafts.py); this is the way in that needs no summary, the bytes-level
pre-filter: `configs/model_config.py` rewrites the target's architecture for the draft
(`self.hf_config.architectures[0] = "Qwen3MoeForCausalLMMTP"` when is_draft_model), and
SGLang names its EAGLE/MTP/NextN/DFlash/DSpark draft classes by their role.

`configs/model_config.py` is read here, once per tree, not through analysis/python/project.py:
it is the engine's configuration code, read for string literals, never summarised,
checked or written, and the role test is asked with a class name and a path alone
(the bytes index in analysis/sglang/held.py asks before any Project summary exists).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..syntax.sources import SourceError, read_source

# an assignment of the draft's architecture on one line: `architectures[0] = "X"`,
# `architectures = ["X"]` (a comparison `==` is not one)
_REMAP = re.compile(r"architectures(?:\[0\])?\s*=(?!=)([^\n]*)")
_LITERAL = re.compile(r"[\"'](\w+)[\"']")
_DRAFT_NAME = re.compile(r"NextN|MTP|Eagle|DFlash|DSpark|Draft")
_remapped: dict[str, frozenset[str]] = {}
_config_of: dict[Path | str, str] = {}  # a model file's absolute path -> the model_config.py beside its models folder


def is_draft_name(name: str, path: Path | str) -> bool:
    """A class named or remapped as a draft, from its own name and the file that defines it
    (no parsing needed). Its own name only: a base's name says nothing of how a subclass is
    registered (`Eagle3CaptureMixin` is a target's)."""
    if _DRAFT_NAME.search(name):
        return True
    config = _config_of.get(path)
    if config is None:
        config = str(Path(path).parent.parent / "configs" / "model_config.py")
        if os.path.isabs(path):  # a relative one names another file once the working directory changes
            _config_of[path] = config
    if config not in _remapped:
        _remapped[config] = draft_architectures(Path(config))
    return name in _remapped[config]


def draft_architectures(config: Path) -> frozenset[str]:
    """The architectures `ModelConfig._config_draft_model` rewrites a draft's config to
    (`if is_draft_model and ...: self.hf_config.architectures[0] = "MiMoMTP"`): what the
    engine then looks up in the model registry for the draft."""
    try:
        text = read_source(config).text
    except SourceError:
        return frozenset()
    start = text.find("def _config_draft_model")
    if start < 0:
        return frozenset()
    end = text.find("\n    def ", start + 1)
    body = text[start:end if end > 0 else len(text)]
    return frozenset(n for m in _REMAP.finditer(body) for n in _LITERAL.findall(m.group(1)))
