#!/usr/bin/env bash
# The sandbox's own cost on the H200 and the GPU attack suite again on the final code (raw outputs in $OUT):
#   bash scripts/h200_sandbox_again.sh
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-sandbox
git log -1 --format='%H %s' > "$OUT/commit.txt" 2>/dev/null || true
python scripts/sandbox_cost.py --repeat 30 > "$OUT/sandbox_cost.txt" 2>&1
python -m pytest -q -n 4 -p no:cacheprovider tests/test_sandbox.py > "$OUT/test_sandbox.log" 2>&1
echo "test_sandbox: exit $?" >> "$OUT/sandbox_cost.txt"
python -m pytest -q -n 4 -m gpu -p no:cacheprovider tests/test_attacks.py tests/test_warm.py > "$OUT/gpu-attacks.log" 2>&1
echo "gpu attack tests: exit $?" >> "$OUT/sandbox_cost.txt"
cat "$OUT/sandbox_cost.txt"; tail -3 "$OUT/test_sandbox.log" "$OUT/gpu-attacks.log"
