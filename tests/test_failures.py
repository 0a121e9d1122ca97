"""Failures from outside the code: permissions, a full disk, a kill, a closed pipe, a huge file.

Each is made real in a child process (privileges dropped with setpriv, RLIMIT_FSIZE
with SIGXFSZ ignored so a write fails with EFBIG as on a full disk, SIGKILL, a pipe
whose reader is gone). None may print a traceback, and none may lose data: after
each, every file is its old or its new version, byte for byte, and no temporary
file is left where eaglelint could clean up.
"""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import REPO
from test_hostile_input import LM, wrapper

FIXED = b"def get_embed_and_head(self):"


def eaglelint(*args, cwd=None, preexec_fn=None, prefix=(), env=None):
    return subprocess.run([*prefix, sys.executable, "-m", "eaglelint", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, preexec_fn=preexec_fn,
                          env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **(env or {})})


def make_case(root: Path, filler: bytes = b"") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "lm.py").write_bytes(LM)
    (root / "w.py").write_bytes(filler + wrapper().encode())
    return root


def quiet(done: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in done.stdout + done.stderr and "Exception ignored" not in done.stderr


# -- permissions -----------------------------------------------------------------------------------

NOBODY = ("setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups")


@pytest.fixture
def shared_tmp():
    """A folder the unprivileged user can enter (pytest's tmp_path is private to root)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run eaglelint as an unprivileged user")
    probe = eaglelint("--version", prefix=NOBODY)
    if probe.returncode != 0:
        pytest.skip(f"this Python cannot run as an unprivileged user here: {probe.stderr.strip()[-200:]}")
    folder = Path(tempfile.mkdtemp(prefix="eaglelint-nobody-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_unreadable_file_and_folder_are_reported_and_the_rest_checked(shared_tmp):
    case = make_case(shared_tmp / "tree")
    secret = case / "secret.py"
    secret.write_bytes(wrapper(name="SecretWrapper").encode())
    secret.chmod(0o000)
    private = case / "private"
    make_case(private)
    private.chmod(0o000)
    done = eaglelint("check", "--no-cache", "--output-format", "json", case, prefix=NOBODY)
    assert done.returncode == 1 and quiet(done) and done.stderr == ""
    rows = json.loads(done.stdout)
    assert {(Path(r["path"]).name, r["code"]) for r in rows} == {
        ("w.py", "EGL001"), ("secret.py", "EGL999"), ("private", "EGL999")}
    assert "permission denied" in next(r["message"] for r in rows if r["path"].endswith("secret.py")).lower()


def test_fix_where_it_may_not_write_keeps_the_file_and_says_so(shared_tmp):
    case = make_case(shared_tmp / "tree")
    before = (case / "w.py").read_bytes()
    done = eaglelint("fix", "--write", "--no-cache", case, prefix=NOBODY)
    assert done.returncode == 1 and quiet(done)
    assert "not written" in done.stdout and "w.py" in done.stdout and "Permission denied" in done.stdout
    assert (case / "w.py").read_bytes() == before and sorted(p.name for p in case.iterdir()) == ["lm.py", "w.py"]


@pytest.mark.parametrize("state", ["absent", "filled by root"])
def test_cache_folder_of_another_user_only_warns(shared_tmp, state):
    """As nobody, the default cache folder root made (as when HOME is still root's) is out of reach:
    one warning, the same findings."""
    case = make_case(shared_tmp / "tree")
    env = {"XDG_CACHE_HOME": str(shared_tmp / "xdg")}
    if state == "filled by root":
        assert eaglelint("check", case, env=env).returncode == 1
        assert list((shared_tmp / "xdg").rglob("*.json"))
        (shared_tmp / "xdg" / "eaglelint").chmod(0o700)
    plain = eaglelint("check", "--no-cache", "--output-format", "json", case, prefix=NOBODY)
    for _ in range(2):
        done = eaglelint("check", "--output-format", "json", case, prefix=NOBODY, env=env)
        assert json.loads(done.stdout) == json.loads(plain.stdout) and quiet(done)
        assert len(done.stderr.splitlines()) == 1 and "warning: cache not used here" in done.stderr


# -- a full disk -------------------------------------------------------------------------------------

def file_size_limit(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_disk_full_during_fix_write_keeps_the_original_and_leaves_no_temporary_file(tmp_path):
    case = make_case(tmp_path / "tree", filler=b"# padding\n" * 2000)
    before = (case / "w.py").read_bytes()
    done = eaglelint("fix", "--write", "--no-cache", case, preexec_fn=file_size_limit(len(before)))
    assert done.returncode == 1 and quiet(done)
    assert "not written" in done.stdout and "File too large" in done.stdout
    assert (case / "w.py").read_bytes() == before
    assert sorted(p.name for p in case.iterdir()) == ["lm.py", "w.py"]
    assert eaglelint("fix", "--write", "--no-cache", case).returncode == 0  # with room again, it is fixed
    assert FIXED in (case / "w.py").read_bytes()


# -- killed mid-write --------------------------------------------------------------------------------

def large_tree(root: Path, files: int = 6) -> Path:
    """Wrappers of about 4 MB each (comments: cheap to parse, slow to write)."""
    root.mkdir()
    (root / "lm.py").write_bytes(LM)
    filler = b"".join(b"# %07d padding to make the write take a while.........................\n" % i
                      for i in range(50_000))
    for i in range(files):
        (root / f"w{i}.py").write_bytes(filler + wrapper(name=f"Wrapper{i}").encode())
    return root


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


@pytest.mark.slow
def test_fix_killed_mid_write_leaves_every_file_old_or_new(tmp_path):
    old_tree = large_tree(tmp_path / "old")
    new_tree = tmp_path / "new"
    shutil.copytree(old_tree, new_tree)
    assert eaglelint("fix", "--write", "--no-cache", new_tree).returncode == 0
    old = {p.name: p.read_bytes() for p in old_tree.iterdir()}
    new = {p.name: p.read_bytes() for p in new_tree.iterdir()}
    assert all(FIXED in new[name] for name in new if name != "lm.py")
    caught = 0
    for round_ in range(4):
        work = tmp_path / f"round{round_}"
        shutil.copytree(old_tree, work)
        stamps = {name: _stamp(work / name) for name in old}
        process = subprocess.Popen([sys.executable, "-m", "eaglelint", "fix", "--write", "--no-cache", str(work)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "PYTHONPATH": str(REPO)})
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            # even rounds: as soon as a write is under way; odd rounds: as soon as a file has changed
            # on disk (after an atomic rename, that is mid-way through the next file's write)
            if (any(name.endswith(".eaglelint") for name in os.listdir(work)) if round_ % 2 == 0 else
                    any(_stamp(work / name) != stamp for name, stamp in stamps.items())):
                process.send_signal(signal.SIGKILL)
                caught += 1
                break
        process.wait()
        for name in old:
            now = (work / name).read_bytes()
            assert now in (old[name], new[name]), f"round {round_}: {name} is neither old nor new"
        leftovers = [p.name for p in work.iterdir() if p.name not in old]
        assert all(p.startswith(".") and p.endswith(".eaglelint") for p in leftovers)  # hidden, never a .py
    assert caught >= 2, "the kill never landed during a write: the test proved nothing"


# -- a closed pipe ------------------------------------------------------------------------------------

@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_reader_gone_before_output_exits_quietly(tmp_path, output_format):
    case = make_case(tmp_path / "tree")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "eaglelint", "check", "--no-cache", "--output-format",
                               output_format, str(case)], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        os.close(write_end)
    assert done.stderr == "" and done.returncode in (1, 2)


def test_check_piped_into_head_exits_quietly(tmp_path):
    for i in range(40):
        make_case(tmp_path / f"case{i}")
    command = (f"{sys.executable} -m eaglelint check --no-cache --output-format json {tmp_path} "
               f"2>{tmp_path / 'stderr'} | head -1")
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout == "[\n" and (tmp_path / "stderr").read_text() == ""


# -- a huge file ---------------------------------------------------------------------------------------

def peak_rss_kb(*args, cwd=None) -> tuple[int, subprocess.CompletedProcess]:
    """The peak resident size of an eaglelint run in a fresh interpreter. On Linux from VmHWM,
    which the exec starts afresh: ru_maxrss counts the forking test process's own pages too
    (a full suite's 180 MB, or the 50 MB of bytes a test has just written), which made the
    comparison depend on what ran before."""
    code = ("import resource, sys\nfrom eaglelint.cli import main\nsys.argv = ['eaglelint', *sys.argv[1:]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "try:\n    peak = next(int(line.split()[1]) for line in open('/proc/self/status') "
            "if line.startswith('VmHWM:'))\n"
            "except (OSError, StopIteration):\n    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "print(peak, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})
    return int(done.stderr.splitlines()[-1]), done


def test_huge_file_is_reported_too_large_and_never_read(tmp_path):
    case = make_case(tmp_path / "tree")
    baseline_kb, _ = peak_rss_kb("check", "--no-cache", "--output-format", "json", case)
    huge = case / "huge.py"
    huge.write_bytes(b"value = 1  # fifty megabytes of valid Python\n" * (50 * 2**20 // 45))
    rss_kb, done = peak_rss_kb("check", "--no-cache", "--output-format", "json", case)
    rows = json.loads(done.stdout)
    assert {(Path(r["path"]).name, r["code"]) for r in rows} == {("w.py", "EGL001"), ("huge.py", "EGL999")}
    assert "too large" in next(r["message"] for r in rows if r["path"].endswith("huge.py"))
    assert rss_kb < baseline_kb + 20 * 1024  # reading the file alone would add 50 MB


def test_max_file_size_from_config_and_flag(tmp_path):
    case = make_case(tmp_path / "tree", filler=b"# padding\n" * 300)
    (case / "pyproject.toml").write_text('[tool.eaglelint]\nmax-file-size = "2KB"\n')
    done = eaglelint("check", "--no-cache", "--output-format", "json", case)
    assert {(Path(r["path"]).name, r["code"]) for r in json.loads(done.stdout)} == {("w.py", "EGL999")}
    done = eaglelint("check", "--no-cache", "--output-format", "json", "--max-file-size", "1MiB", case)
    assert {(Path(r["path"]).name, r["code"]) for r in json.loads(done.stdout)} == {("w.py", "EGL001")}
    (case / "pyproject.toml").write_text("[tool.eaglelint]\nmax-file-size = -1\n")
    done = eaglelint("check", "--no-cache", case)
    assert done.returncode == 2 and quiet(done) and "max-file-size" in done.stderr
