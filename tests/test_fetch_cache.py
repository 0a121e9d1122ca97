"""The release cache: a tree fetched with fewer prefixes is extracted again, a whole tree
is renamed into place (never half of one), a cached tree that covers the request and
still matches the digest in its marker is reused untouched, and one whose files changed
is extracted again. A local wheel stands for the registry's; nothing is downloaded."""

import json
import zipfile

import fetch_sglang
import pytest

from eaglelint.fix.write_targets import FETCHED_MARKER


@pytest.fixture
def wheel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EAGLELINT_RELEASES", str(tmp_path))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "pkg-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("pkg/a/models/m.py", "x = 1\n")
        zf.writestr("pkg/b/other.py", "y = 2\n")
        zf.writestr("pkg/c/skipped.py", "z = 3\n")
    return tmp_path


def test_a_tree_from_an_older_fetch_is_extracted_again_with_the_new_prefixes(wheel_cache):
    old = wheel_cache / "pkg-1.0"
    (old / "pkg/a/models").mkdir(parents=True)
    (old / "pkg/a/models/m.py").write_text("x = 1\n")
    (old / ".complete").touch()  # the empty marker earlier fetches wrote: first prefix only
    assert fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",)) == old
    assert not (old / "pkg/b").exists()  # covered, extracted again only for the digest it lacked
    assert (old / FETCHED_MARKER).is_file()
    root = fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/", "pkg/b/"))
    assert (root / "pkg/b/other.py").read_text() == "y = 2\n"
    assert not (root / "pkg/c").exists()
    assert (root / ".complete").read_text().split() == ["pkg/a/models/", "pkg/b/"]
    assert sorted(p.name for p in wheel_cache.iterdir()) == ["pkg-1.0", "wheels"]  # no temp folder left


def test_a_failed_extraction_leaves_the_cached_tree_as_it_was(wheel_cache, monkeypatch):
    fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",))

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(zipfile.ZipFile, "extractall", broken)
    with pytest.raises(OSError):
        fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/", "pkg/b/"))
    root = wheel_cache / "pkg-1.0"
    assert (root / "pkg/a/models/m.py").is_file() and (root / ".complete").read_text().split() == ["pkg/a/models/"]
    assert sorted(p.name for p in wheel_cache.iterdir()) == ["pkg-1.0", "wheels"]


def test_an_intact_tree_is_reused_untouched(wheel_cache):
    root = fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",))
    assert json.loads((root / FETCHED_MARKER).read_text())["digest"] == fetch_sglang.tree_digest(root)
    (root / "notes.txt").write_text("kept")  # not a .py file: not part of the release's digest
    (root / "pkg/a/models/__pycache__").mkdir()
    (root / "pkg/a/models/__pycache__/m.cpython-311.py").write_text("bytecode cache")
    assert fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",)) == root
    assert (root / "notes.txt").read_text() == "kept"


@pytest.mark.parametrize("change", ["edited", "added", "removed"])
def test_a_tree_whose_files_changed_is_extracted_again(wheel_cache, change):
    root = fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",))
    module = root / "pkg/a/models/m.py"
    if change == "edited":  # as `fix --write --allow-fetched-release` or an editor would
        module.write_text("x = 1\n\n\ndef added():\n    pass\n")
    elif change == "added":
        (root / "pkg/a/models/new.py").write_text("")
    else:
        module.unlink()
    assert fetch_sglang.fetch("pkg", "1.0", ("pkg/a/models/",)) == root
    assert module.read_text() == "x = 1\n"
    assert sorted(p.name for p in (root / "pkg/a/models").iterdir()) == ["m.py"]
    assert sorted(p.name for p in wheel_cache.iterdir()) == ["pkg-1.0", "wheels"]  # no temp folder left
