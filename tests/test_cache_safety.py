"""The cache as CI meets it: restored from storage a pull request can write, shared, filling up.

A cache entry is data that eaglelint decodes field by field; a crafted one (a pickle
that runs code when loaded, a JSON entry with the wrong types, an oversized file) is
a cache miss with one warning. The folder stays bounded, old versions go, and
`eaglelint clean` removes it.
"""

import json
import os
import pickle
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from eaglelint.analysis.python.project import summarize_raw
from eaglelint.analysis.store import cache as cachemod
from eaglelint.analysis.store.cache import SummaryCache, format_tag
from eaglelint.analysis.store.cache_codec import HEADER, EntryError, decode, encode

TREE = FIXTURES / "check"


def eaglelint(*args, cwd=None, env=None, preexec_fn=None):
    return subprocess.run([sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})},
                          preexec_fn=preexec_fn)


def check_json(cache_dir: Path | None, *extra, preexec_fn=None):
    cache = ["--cache-dir", cache_dir] if cache_dir else ["--no-cache"]
    return eaglelint("check", "--output-format", "json", *cache, *extra, TREE, preexec_fn=preexec_fn)


class RunsCode:
    """Pickled, loading it writes the marker file: what an attacker would put in a CI cache."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",))


def test_crafted_pickle_under_the_keys_eaglelint_reads_runs_nothing_and_is_one_warning(tmp_path):
    cache_dir, marker = tmp_path / "cache", tmp_path / "marker"
    expected = json.loads(check_json(None).stdout)
    assert json.loads(check_json(cache_dir).stdout) == expected
    payload = pickle.dumps(RunsCode(marker))
    pickle.loads(payload)  # the payload works: loading it as pickle runs it
    assert marker.exists()
    marker.unlink()
    wrapper_file = TREE / "sglang/srt/models/wrapper_plain_assign.py"
    read_here = SummaryCache(cache_dir).entry_path(SummaryCache.key(wrapper_file.read_bytes()))
    entries = [p for p in cache_dir.rglob("*") if p.is_file() and p.name != "CACHEDIR.TAG"]
    assert read_here in entries and any(p.name.startswith("run-") for p in entries)
    for entry in entries:  # every summary and the whole-run entry: the keys the next run reads
        entry.write_bytes(payload)
    done = check_json(cache_dir)
    assert not marker.exists()
    assert json.loads(done.stdout) == expected
    assert len(done.stderr.splitlines()) == 1 and "warning: cache not used here" in done.stderr
    again = check_json(cache_dir)  # the poisoned entries were replaced by good ones
    assert again.stderr == "" and json.loads(again.stdout) == expected


def test_every_fixture_summary_and_reason_survives_the_round_trip():
    for path in sorted(FIXTURES.rglob("*.py")):
        value = summarize_raw(path, path.read_bytes())
        assert decode(encode(value)) == value, path


@pytest.mark.parametrize("damage", [
    lambda body: body.replace(b'"summary"', b'"pickle"', 1),  # unknown kind
    lambda body: body.replace(b'["call","",""', b'["call",7,""', 1),  # an int where a string belongs
    lambda body: body.replace(b'"summary",[', b'"summary",{', 1),  # not even JSON any more
    lambda body: body[: len(body) // 2],  # truncated
    lambda body: b"eaglelint-cache 999\n" + body[len(HEADER):],  # another format version
])
def test_damaged_or_mistyped_entry_is_refused(damage):
    path = TREE / "sglang/srt/models/wrapper_plain_assign.py"
    entry = encode(summarize_raw(path, path.read_bytes()))
    assert b'["call","",""' in entry and decode(entry)
    with pytest.raises(EntryError):
        decode(damage(entry))


def test_oversized_entry_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(cachemod, "MAX_ENTRY_BYTES", 100)
    messages = []
    cache = SummaryCache(tmp_path, warn=messages.append)
    key = SummaryCache.key(b"x")
    cache.entry_path(key).parent.mkdir(parents=True)
    cache.entry_path(key).write_bytes(encode("x" * 200))
    assert cache.get(key) is None and cache.misses == 1
    assert len(messages) == 1 and "larger" in messages[0]


def test_a_new_version_folder_removes_older_ones_and_nothing_else(tmp_path):
    cache_dir = tmp_path / "cache"
    old = cache_dir / "v-0123456789abcdef" / "ab"
    old.mkdir(parents=True)
    (old / "entry.json").write_text("from an older eaglelint")
    for foreign in ("keep-me", "v-not-a-tag"):
        (cache_dir / foreign).mkdir()
        (cache_dir / foreign / "file").write_text("not eaglelint's")
    assert check_json(cache_dir).returncode == 1
    assert sorted(p.name for p in cache_dir.iterdir()) == [
        "CACHEDIR.TAG", "keep-me", f"v-{format_tag().decode()}", "v-not-a-tag"]
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def test_cache_stays_within_its_size_bound_and_results_do_not_change(tmp_path):
    cache_dir = tmp_path / "cache"
    expected = json.loads(check_json(None).stdout)
    assert json.loads(check_json(cache_dir).stdout) == expected
    unbounded = folder_size(cache_dir / f"v-{format_tag().decode()}")
    bound = unbounded // 3
    small = tmp_path / "small"
    for _ in range(2):
        done = check_json(small, "--cache-max-size", str(bound))
        assert json.loads(done.stdout) == expected and done.stderr == ""
        assert 0 < folder_size(small / f"v-{format_tag().decode()}") <= bound


def test_trim_removes_the_oldest_written_entries_first(tmp_path):
    cache = SummaryCache(tmp_path, max_size=10_000)
    keys = [SummaryCache.key(str(i).encode()) for i in range(30)]
    for i, key in enumerate(keys):
        cache.put(key, "x" * 1000)
        os.utime(cache.entry_path(key), (1_000_000 + i, 1_000_000 + i))
    cache.trim()
    kept = [key for key in keys if cache.entry_path(key).exists()]
    assert kept == keys[len(keys) - len(kept):] and 0 < len(kept) <= 7  # the newest, within 3/4 of the bound


def test_bad_cache_size_is_a_usage_error():
    done = check_json(None, "--cache-max-size", "lots")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1].startswith("Error: --cache-max-size: must be a size")


def test_clean_removes_the_cache_and_only_the_cache(tmp_path):
    cache_dir = tmp_path / "cache"
    check_json(cache_dir)
    (cache_dir / "v-0123456789abcdef").mkdir()
    (cache_dir / "notes.txt").write_text("the user's")
    done = eaglelint("clean", "--cache-dir", cache_dir)
    assert done.returncode == 0 and len(re.findall(r"summary cache .*/v-[0-9a-f]{16}$", done.stdout, re.M)) == 2
    assert sorted(p.name for p in cache_dir.iterdir()) == ["CACHEDIR.TAG", "notes.txt"]  # the tag stays with them
    (cache_dir / "notes.txt").unlink()
    check_json(cache_dir)
    done = eaglelint("clean", env={"EAGLELINT_CACHE_DIR": str(cache_dir)})
    assert done.returncode == 0 and not cache_dir.exists()
    done = eaglelint("clean", "--cache-dir", cache_dir)
    assert done.returncode == 0 and "No eaglelint cache" in done.stdout


def test_clean_uses_the_default_folder(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    eaglelint("check", TREE, env=env)
    assert (tmp_path / "eaglelint").is_dir()
    assert eaglelint("clean", env=env).returncode == 0
    assert list(tmp_path.iterdir()) == []


def file_size_limit(limit: int):
    """In the child: writes past `limit` bytes fail with EFBIG, as on a full disk (not killed by SIGXFSZ)."""
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_cache_write_on_a_full_disk_warns_once_and_leaves_no_temporary_file(tmp_path):
    cache_dir = tmp_path / "cache"
    expected = json.loads(check_json(None).stdout)
    done = check_json(cache_dir, preexec_fn=file_size_limit(300))
    assert json.loads(done.stdout) == expected and done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and "File too large" in done.stderr
    assert not [p for p in cache_dir.rglob("*") if p.name.endswith(".tmp")]
    for entry in (p for p in cache_dir.rglob("*.json")):
        decode(entry.read_bytes())  # what was written whole is a whole entry


@pytest.mark.slow
def test_two_processes_sharing_a_cache_folder_agree_for_20_rounds(tmp_path):
    cache_dir = tmp_path / "cache"
    expected = json.loads(check_json(None).stdout)
    command = [sys.executable, "-m", "eaglelint", "check", "--output-format", "json", "--cache-dir",
               str(cache_dir), str(TREE)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for round_ in range(20):
        if round_ % 2 == 0:  # half the rounds start cold: both processes write the same entries at once
            eaglelint("clean", "--cache-dir", cache_dir)
        both = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                for _ in range(2)]
        for process in both:
            out, err = process.communicate()
            assert err == "", f"round {round_}: {err}"  # a corrupt or half-written entry would warn
            assert json.loads(out) == expected, f"round {round_}"


def test_every_fixture_files_suppression_directives_survive_the_round_trip_and_damage_is_refused():
    """The directives a warm run reads from the cache instead of tokenizing the file."""
    from eaglelint.analysis.syntax.directives import scan_directives
    from eaglelint.analysis.syntax.sources import SourceError, decode_source

    scans = []
    for path in sorted(FIXTURES.rglob("*.py")):
        raw = path.read_bytes()
        try:
            scan = scan_directives(raw, decode_source(path, raw).text)
        except SourceError:
            continue
        assert decode(encode(scan)) == scan, path
        scans.append(scan)
    entry = encode(next(s for s in scans if any(d.codes for d in s.directives) and s.spans))
    for damage in (lambda b: b.replace(b'"noqa"', b'"pickle"', 1),  # a directive kind eaglelint has not
                   lambda b: b.replace(b'"directives",[[', b'"directives",[["1",', 1),  # a string for a line
                   lambda b: b[: len(b) // 2]):
        with pytest.raises(EntryError):
            decode(damage(entry))
