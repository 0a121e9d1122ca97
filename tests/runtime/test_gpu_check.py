"""The one-call GPU check on CPU: what the copy to the GPU machine holds, and how each engine run is launched and ended.

The engine launcher is run here on a stand-in `sglang` package (written below)
that behaves as SGLang does where it matters to the launcher: the engine runs
its model in a spawned grandchild process, which prints to the same output.
The size test builds the real carry archive (cached, see gpu_carry.py) and
counts what would travel exactly as the device tool does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest
from runtime_support import RUNTIME_SCRIPTS, draft_probe, gpu_carry, gpu_script

FAKE_SGLANG = textwrap.dedent("""\
    import json, multiprocessing, os, time
    __version__ = "stand-in"

    def scheduler(pid_file, mode):
        open(pid_file, "w").write(str(os.getpid()))
        from types import SimpleNamespace
        from sglang.srt.models.llama_eagle3 import LlamaModel
        T = type("T", (), {"shape": (8, 192), "dim": lambda self: 2})
        batch = SimpleNamespace(spec_info=SimpleNamespace(hidden_states=T()),
                                forward_mode=SimpleNamespace(name="EXTEND"))
        LlamaModel().forward(None, None, batch)
        if mode == "hang":
            time.sleep(600)

    class Engine:
        def __init__(self, **kwargs):
            mode = os.environ["FAKE_MODE"]
            self.child = multiprocessing.get_context("spawn").Process(
                target=scheduler, args=(os.environ["FAKE_PID_FILE"], mode))
            self.child.start()
            self.child.join(None if mode == "decode" else 600)

        def generate(self, input_ids, sampling_params):
            n = sampling_params["max_new_tokens"]
            return [{"output_ids": list(range(n)), "meta_info": {"spec_verify_ct": 7, "e2e_latency": 1}}]

        def shutdown(self):
            pass
""")
FAKE_EAGLE3 = "class LlamaModel:\n    def forward(self, input_ids, positions, forward_batch):\n        return None\n"


def fake_tree(root: Path) -> Path:
    models = root / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (root / "sglang" / "__init__.py").write_text(FAKE_SGLANG)
    (root / "sglang" / "srt" / "__init__.py").write_text("")
    (models / "__init__.py").write_text("")
    (models / "llama_eagle3.py").write_text(FAKE_EAGLE3)
    return root


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state  # a zombie is dead, only not yet reaped


def test_launch_ends_a_hung_engine_and_its_spawned_scheduler_at_the_timeout(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "hang")
    monkeypatch.setenv("FAKE_PID_FILE", str(tmp_path / "scheduler.pid"))
    start = time.monotonic()
    run = gpu_script.launch(fake_tree(tmp_path / "tree"), "target", "draft", 8, tmp_path / "engine.log")
    assert run["timed_out"] is True and run["exit"] is None and run["timeout_s"] == 8
    assert time.monotonic() - start < 30
    scheduler = int((tmp_path / "scheduler.pid").read_text())
    deadline = time.monotonic() + 10
    while alive(scheduler) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(scheduler), "the engine's grandchild outlived the timeout"
    # what the scheduler printed before it hung is in the log: the probe marker from the spawned process
    assert run["draft_inputs"] == [{"mode": "EXTEND", "width": 192, "rows": 8, "fc_in": None, "embed_dim": None}]
    assert "engine: sglang stand-in from " + str(tmp_path / "tree") in run["log_tail"]


def test_a_sigterm_to_the_launcher_ends_the_engines_session_too(tmp_path):
    """What the shell's `timeout` in gpu_check.sh sends: the engine runs in a session of its own (setsid),
    which the GPU run would leave running, so the launcher must end it before it exits."""
    code = (f"import sys; sys.path.insert(0, {str(RUNTIME_SCRIPTS)!r}); import gpu_eagle3_kimi_k25 as g; "
            f"from pathlib import Path; g.launch(Path({str(fake_tree(tmp_path / 'tree'))!r}), 't', 'd', 120, "
            f"Path({str(tmp_path / 'engine.log')!r}))")
    env = dict(os.environ, FAKE_MODE="hang", FAKE_PID_FILE=str(tmp_path / "scheduler.pid"))
    launcher = subprocess.Popen([sys.executable, "-c", code], env=env)
    deadline = time.monotonic() + 60
    while not (tmp_path / "scheduler.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    scheduler = int((tmp_path / "scheduler.pid").read_text())
    launcher.terminate()
    assert launcher.wait(timeout=30) == 143
    deadline = time.monotonic() + 10
    while alive(scheduler) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(scheduler), "the engine's session outlived the launcher"


def test_launch_reads_the_result_and_the_spawned_processs_markers(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "decode")
    monkeypatch.setenv("FAKE_PID_FILE", str(tmp_path / "scheduler.pid"))
    run = gpu_script.launch(fake_tree(tmp_path / "tree"), "target", "draft", 60, tmp_path / "engine.log")
    assert run["exit"] == 0 and run["timed_out"] is False
    assert run["result"]["output_ids"] == list(range(gpu_script.MAX_NEW_TOKENS))
    assert run["result"]["meta_info"] == {"spec_verify_ct": 7}
    assert [m["width"] for m in run["draft_inputs"]] == [192]
    assert draft_probe.MARK in (tmp_path / "engine.log").read_text()


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


def test_travel_counts_tracked_untracked_shared_and_carried_files_but_not_ignored_ones(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("/.gpu-carry/\n/.venv/\n")  # 21 bytes
    (repo / "src" / "a.py").write_bytes(b"x" * 100)
    (repo / "src" / "gone.py").write_bytes(b"g" * 9)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "t")
    (repo / "src" / "gone.py").unlink()                              # tracked but deleted: nothing to send
    (repo / "notes.txt").write_bytes(b"y" * 30)                      # untracked, not ignored: travels
    (repo / ".venv").mkdir()
    (repo / ".venv" / "big").write_bytes(b"z" * 5000)                 # ignored: stays
    (repo / ".gpu-carry").mkdir()
    (repo / ".gpu-carry" / "site.tar.xz").write_bytes(b"w" * 700)     # ignored but carried: travels
    (repo / "shared").mkdir()
    (repo / "shared" / "s").write_bytes(b"v" * 4)                     # untracked as well: counted once
    sizes = gpu_carry.travel_bytes(repo)
    assert sizes == {"tracked": 121, "untracked": 34, "shared": 0, "carry:.gpu-carry": 700, "total": 855}


@pytest.mark.runtime
@pytest.mark.slow
def test_the_carry_for_one_gpu_call_fits_64_mib_with_the_tree_and_unpacks_what_the_run_imports(tmp_path):
    """Builds .gpu-carry/ as a person would before the GPU run (downloads once, then cached)."""
    carry = gpu_carry.build()
    manifest = json.loads((carry / gpu_carry.MANIFEST).read_text())
    assert manifest["packages"] == gpu_carry.pins() and manifest["digest"] == gpu_carry.digest()
    sizes = gpu_carry.travel_bytes()
    assert sizes["total"] <= gpu_carry.LIMIT, sizes
    with tarfile.open(carry / gpu_carry.ARCHIVE, "r:xz") as tar:
        names = set(tar.getnames())
    for need in ("./sglang/srt/models/kimi_k25.py", "./sglang/srt/models/llama_eagle3.py",
                 "./sgl_kernel/sm90/common_ops.abi3.so", "./flashinfer/sampling.py", "./xgrammar/__init__.py",
                 "./transformers/__init__.py", "./tokenizers/__init__.py"):
        assert need in names, need
    assert not any(n.startswith(("./sgl_kernel/flash_ops", "./sgl_kernel/sm100/", "./xgrammar/lib/"))
                   for n in names)
    done = subprocess.run([sys.executable, str(RUNTIME_SCRIPTS / "gpu_carry.py"), "unpack", str(carry),
                           str(tmp_path / "site")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    metadata = (tmp_path / "site" / "sglang-0.5.17.dist-info" / "METADATA").read_text()
    assert "\nVersion: 0.5.17\n" in metadata
    assert (tmp_path / "site" / "sgl_kernel" / "sm90" / "common_ops.abi3.so").is_file()


def test_unpack_refuses_a_carry_built_from_another_pin_list(tmp_path):
    (tmp_path / gpu_carry.MANIFEST).write_text(json.dumps({"digest": "0" * 16, "packages": []}))
    done = subprocess.run([sys.executable, str(RUNTIME_SCRIPTS / "gpu_carry.py"), "unpack", str(tmp_path),
                           str(tmp_path / "site")], capture_output=True, text=True, env=dict(os.environ))
    assert done.returncode == 1 and "built from another pin list" in done.stderr
    assert not (tmp_path / "site").exists()
