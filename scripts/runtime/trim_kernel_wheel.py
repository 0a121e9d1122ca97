"""Repack SGLang's kernel wheel with the Hopper (sm90) ops only, so it fits a 64 MiB carry.

Why: sglang-kernel 0.4.5 is 383 MB, almost all of it FlashAttention 3
(`flash_ops.abi3.so`) and the sm100 build of the common ops. The GPU run uses
triton attention and pytorch sampling on an H200 (sm90): `sgl_kernel` loads
`sm90/common_ops` at import and the dropped libraries only when an FA3,
FlashMLA or InfLLM backend asks for them. The wheel's RECORD is rewritten
without the dropped files; nothing else changes.

    python scripts/runtime/trim_kernel_wheel.py sglang_kernel-0.4.5-....whl OUT_DIR
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

DROP = ("sgl_kernel/flash_ops", "sgl_kernel/sm100/", "sgl_kernel/infllm_ops", "sgl_kernel/flashmla_ops")


def dropped(name: str) -> bool:
    return name.startswith(DROP)


def trim(wheel: Path, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / wheel.name
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if dropped(info.filename):
                continue
            data = src.read(info.filename)
            if info.filename.endswith(".dist-info/RECORD"):
                kept = [line for line in data.decode().splitlines() if not dropped(line.split(",", 1)[0])]
                data = ("\n".join(kept) + "\n").encode()
            dst.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(trim(Path(sys.argv[1]), Path(sys.argv[2])))
