#!/usr/bin/env bash
# The GPU proof in one run: unpack the carried packages, then the unfixed, fixed and
# broken-fix engines (scripts/runtime/gpu_eagle3_kimi_k25.py), then the verdict. Everything ends
# inside BUDGET_S (default 480 s, unpacking included); each engine has its own timeout inside it.
#
# Here, once:   python3 scripts/runtime/gpu_carry.py build      (writes .gpu-carry/, about 55 MiB)
# Run from the checkout's root, with .gpu-carry/ in it, under a 560 s limit:  bash scripts/runtime/gpu_check.sh
#
# Writes $OUT/gpu_check.log (this whole output), $OUT/verdict.json and $OUT/engine-{fixed,broken,
# unfixed}.log; exits 0 when the verdict is PASS. Where OUT is unset (by hand) it writes ./gpu-check-out/.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
BUDGET_S=${BUDGET_S:-480}
OUT=${OUT:-$PWD/gpu-check-out}
SITE=${GPU_CHECK_SITE:-/tmp/eaglelint-site}
WORK=${GPU_CHECK_WORK:-/tmp/eaglelint-gpu-work}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT"

main() {
    echo "== $(date -u +%FT%TZ) gpu_check: budget ${BUDGET_S} s"
    nvidia-smi -L 2>&1 | head -2
    python3 -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__,
          "cuda", torch.cuda.is_available())' || return 1
    echo "== unpack .gpu-carry into $SITE"
    python3 scripts/runtime/gpu_carry.py unpack .gpu-carry "$SITE" || return 1
    local left=$(( BUDGET_S - ($(date +%s) - START) - 15 ))  # 15 s for the verdict and the copy back
    echo "== engines: $left s left"
    PYTHONPATH="$SITE:$PWD" timeout --kill-after=10 "$left" \
        python3 scripts/runtime/gpu_eagle3_kimi_k25.py "$WORK" --out "$OUT" --budget "$(( left - 10 ))"
}

main 2>&1 | tee "$OUT/gpu_check.log"
status=${PIPESTATUS[0]}
echo "== done in $(( $(date +%s) - START )) s, exit $status" | tee -a "$OUT/gpu_check.log"
exit "$status"
