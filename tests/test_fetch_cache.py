"""The release cache: a tree fetched with fewer prefixes is extracted again, a whole tree
is renamed into place (never half of one), and a cached tree that covers the request is
reused untouched. A local wheel stands for the registry's; nothing is downloaded."""

import zipfile

import fetch_sglang
import pytest


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
    assert not (old / "pkg/b").exists()  # covered: reused as it is
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
