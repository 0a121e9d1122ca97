"""The status memo (analysis/python/project.py `unchanged_since`): a warm run takes the digest of a
file whose status (size, mtime and ctime to the nanosecond, inode) is what it was when a run
read it, without reading it, as git and ruff trust a file's status; any write is seen.
"""

import os
from pathlib import Path

import pytest

from eaglelint.analysis.python import project as project_module
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.analysis.store.cache_codec import EntryError, StatusMemo, decode, encode
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces

LM = '''from torch import nn


class LMForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.lm_head = nn.Linear(1, 1)

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.layers_to_capture = layer_ids

    def get_embed_and_head(self):
        return self.embed, self.lm_head.weight
'''

WRAPPER = '''from torch import nn

from sglang.srt.models.lm import LMForCausalLM


class Wrapper(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.language_model = LMForCausalLM(config)

    def set_eagle3_layers_to_capture(self, layer_ids):
        self.language_model.set_eagle3_layers_to_capture(layer_ids)

    def get_embed_and_head(self):
        return self.language_model.get_embed_and_head()


EntryClass = [Wrapper]
'''


def tree(root: Path) -> Path:
    models = root / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (root / "sglang" / "__init__.py").write_text("")
    (models / "lm.py").write_text(LM)
    (models / "wrapper.py").write_text(WRAPPER)
    return models


def check(models: Path, cache_dir: Path) -> list[tuple[str, str, str | None]]:
    options = CheckOptions(tuple(select_interfaces(None)))
    found = check_files(sorted(models.glob("*.py")), options, Project(SummaryCache(cache_dir))).findings
    return sorted((f.class_name, f.code, f.method) for f in found)


def refuse_reads(monkeypatch):
    def refused(path, limit=None):
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(project_module, "read_bytes_and_stat", refused)


def test_a_warm_run_reads_no_file_whose_status_is_unchanged(tmp_path, monkeypatch):
    monkeypatch.setattr(project_module, "RACY_NS", 0)  # files written by the test are seconds old at most
    models = tree(tmp_path / "t")
    first = check(models, tmp_path / "cache")
    refuse_reads(monkeypatch)
    assert check(models, tmp_path / "cache") == first == []


def test_a_file_rewritten_with_its_size_and_mtime_kept_is_read_again(tmp_path, monkeypatch):
    """The write moves the ctime, which no program can set back: the new bytes are seen."""
    monkeypatch.setattr(project_module, "RACY_NS", 0)
    models = tree(tmp_path / "t")
    assert check(models, tmp_path / "cache") == []
    wrapper = models / "wrapper.py"
    before = wrapper.stat()
    wrapper.write_text(WRAPPER.replace("def get_embed_and_head(self):", "def get_embed_and_heax(self):"))
    os.utime(wrapper, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = wrapper.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert ("Wrapper", "EGL001", "get_embed_and_head") in check(models, tmp_path / "cache")


def test_a_file_read_right_after_it_was_written_is_not_remembered(tmp_path, monkeypatch):
    """Racy git: a second write within the same timestamp tick keeps the status; a file this
    fresh is read again next time (the default RACY_NS, seconds)."""
    models = tree(tmp_path / "t")
    check(models, tmp_path / "cache")
    refuse_reads(monkeypatch)
    with pytest.raises(AssertionError, match="read "):
        check(models, tmp_path / "cache")


def test_the_status_memo_survives_the_codec_and_a_damaged_one_is_refused():
    memo = StatusMemo({"/a/b.py": (10, 1, 2, 3, "ab" * 32)})
    assert decode(encode(memo)) == memo
    data = encode(memo)
    for damaged in (data.replace(b"[10,", b'["10",'), data.replace(b',"abab', b',7,"abab'),
                    data.replace(b"[10,1,2,3,", b"[10,1,2,")):
        with pytest.raises(EntryError):
            decode(damaged)
