"""analysis/python/project.py's Project is the one owner of a scanned file's bytes and trees."""

import os
from collections import Counter

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.discover import discover
from eaglelint.analysis.python.project import Project
from eaglelint.analysis.store.cache import SummaryCache
from eaglelint.analysis.syntax.sources import SourceError
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.packs import select_interfaces


def test_a_check_opens_each_scanned_file_once(monkeypatch):
    """Every rule family over every fixture tree (the vLLM marker rules, which read syntax
    trees, and the owner and aux rules included): each file is opened once, however many
    rules and resolutions ask for it. Counted at os.open, under every reader."""
    opened: Counter[str] = Counter()
    real_open = os.open

    def counting_open(path, *args, **kwargs):
        opened[os.path.abspath(path)] += 1
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    for packs in (["all"], ["vllm"]):
        tree = FIXTURES / "check" / ("vllm" if packs == ["vllm"] else "sglang")
        check_files(discover([tree]).files, CheckOptions(tuple(select_interfaces(packs))), Project())
    read_twice = {p: n for p, n in opened.items() if p.endswith(".py") and n > 1}
    assert opened and not read_twice


def test_raw_source_and_tree_are_kept_and_a_failure_is_a_source_error(tmp_path):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_bytes(b"\xef\xbb\xbfx = 1\r\n")
    bad.write_text("class W(:\n")
    project = Project()
    assert project.raw(good) is project.raw(good)
    assert project.source(good).text == "x = 1\r\n"  # BOM taken off, newlines kept
    assert project.tree(good) is project.tree(good)
    assert good in project.digests  # noted for the cache
    with pytest.raises(SourceError, match="syntax error"):
        project.tree(bad)
    bad.write_text("x = 2\n")  # read once: the run goes on with what it read first
    with pytest.raises(SourceError, match="syntax error"):
        project.tree(bad)



def test_a_digest_is_the_content_key_and_a_change_since_the_read_is_seen(tmp_path):
    """A file's digest is taken when first asked for (a run without a cache asks for few);
    before and after, bytes other than those read are a change, and equal bytes are not."""
    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    project = Project()
    raw = project.raw(path)
    for _ in ("kept bytes", "hashed"):
        assert not project.changed_since_read(path, b"x = 1\n")  # equal bytes, another object
        assert project.changed_since_read(path, b"x = 2\n")
        assert project.digests[path] == SummaryCache.key(raw)
    assert not project.changed_since_read(tmp_path / "unread.py", b"")  # nothing read there to compare

def _tree_with_sibling_transformers(root):
    models = root / "models"
    models.mkdir(parents=True)
    (models / "transformers.py").write_text("class PretrainedConfig:\n    pass\n")
    (models / "llava.py").write_text("from transformers import PretrainedConfig\n")
    return models


def test_an_absolute_import_in_a_package_module_is_not_its_sibling(tmp_path):
    """SGLang's models/ holds a transformers.py; `from transformers import ...` there is the
    installed library, since a package's folder is not on sys.path (sglang/ has __init__.py,
    models/ is a namespace folder below it)."""
    (tmp_path / "__init__.py").write_text("")
    models = _tree_with_sibling_transformers(tmp_path / "srt")
    assert Project().resolve_module("transformers", models / "llava.py") is None


def test_a_loose_folder_of_scripts_still_sees_its_siblings(tmp_path):
    """`python llava.py` puts the script's folder first on sys.path: the sibling is imported."""
    models = _tree_with_sibling_transformers(tmp_path)
    assert Project().resolve_module("transformers", models / "llava.py") == models / "transformers.py"


def test_a_project_is_freed_once_its_check_and_fix_plans_are_done():
    """What the fix planner keeps per project (the check's resolver, its capture chain) lives on the project, not in a
    module-level table: a run that checks and plans again and again (an editor, the benchmark)
    must not keep every project it made, and every tree it read, alive."""
    import gc
    import weakref

    project = Project()
    wrapper = FIXTURES / "check" / "sglang" / "srt" / "models" / "wrapper_plain_assign.py"
    found = check_files([wrapper], CheckOptions(tuple(select_interfaces(None))), project).findings
    assert any(f.fix is not None and f.method == "set_eagle3_layers_to_capture" for f in found)
    # the planner asked the check's resolver, kept on the project: the case this guards
    assert "check.resolver" in project.analyses
    freed = weakref.ref(project)
    del project
    gc.collect()
    assert freed() is None
