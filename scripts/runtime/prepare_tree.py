"""Copies of an installed SGLang package to run with: as released, stripped back to 0.5.9's gap, or fixed.

Why copies: the runtime proof runs SGLang's own code from a tree that
`eaglelint fix --write` has edited, beside the untouched release; and for
releases that already delegate (0.5.10 and later) it first removes the three
methods from kimi_k25.py, so the fix is tested on the very gap 0.5.9 shipped.
Used by the CPU tests and the GPU script; needs nothing beyond the standard library.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

EAGLE3 = ("set_eagle3_layers_to_capture", "get_embed_and_head", "set_embed_and_head")
KIMI = ("srt/models/kimi_k25.py", "KimiK25ForConditionalGeneration")


def installed_package(python: str | Path = sys.executable) -> Path:
    """The `sglang` folder that `python` would import, found without importing it."""
    code = "import importlib.util as u; print(u.find_spec('sglang').submodule_search_locations[0])"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return Path(done.stdout.strip())


def copy_package(package: Path, root: Path) -> Path:
    """Copy `package` (an `sglang` folder) to root/sglang; put `root` first on sys.path to run it."""
    shutil.copytree(package, root / "sglang", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def strip_methods(path: Path, class_name: str, names: tuple[str, ...] = EAGLE3) -> list[str]:
    """Delete the methods `names` of `class_name` in `path` (decorators included); the deleted names."""
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    cls = next((n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        raise ValueError(f"{path}: no top-level class {class_name}")
    doomed = [n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in names]
    if len(doomed) == len(cls.body):
        raise ValueError(f"{path}: {class_name} would be left with no body")
    for node in sorted(doomed, key=lambda n: n.lineno, reverse=True):
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        end = node.end_lineno
        while start > 0 and not lines[start - 1].strip():  # the blank line that separated it
            start -= 1
        del lines[start:end]
    path.write_text("".join(lines))
    return sorted(n.name for n in doomed)


def run_fix(path: Path, python: str | Path = sys.executable,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`eaglelint fix --write path` with the eaglelint that `python` imports."""
    return subprocess.run([str(python), "-m", "eaglelint", "fix", "--write", str(path)],
                          capture_output=True, text=True, env=env)


def noop_method(path: Path, class_name: str, name: str) -> None:
    """Replace the body of `class_name.name` in `path` with `return None`: a fix that is there but does nothing.

    Why: the GPU run and the CPU tier must be able to fail. A no-op
    set_eagle3_layers_to_capture leaves the target's aux capture off, and the
    engine still decodes (the draft then reads the final hidden state), so only
    a check on what reaches the draft tells the two apart.
    """
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    cls = next((n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    method = next((n for n in (cls.body if cls else []) if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if method is None:
        raise ValueError(f"{path}: no method {class_name}.{name}")
    first, last = method.body[0], method.body[-1]
    if first.lineno == method.lineno:
        raise ValueError(f"{path}: {class_name}.{name} is written on one line")
    indent = " " * first.col_offset
    lines[first.lineno - 1:last.end_lineno] = [f"{indent}return None  # broken on purpose: does nothing\n"]
    path.write_text("".join(lines))
