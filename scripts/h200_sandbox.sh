#!/usr/bin/env bash
# The sandbox on the H200: the probe, a GPU grade through it, the attack suite on the GPU (cold and warm),
# and what it costs a learner's check (scripts/bench_grader.py --sandbox). From the project root there:
#   bash scripts/h200_sandbox.sh        (raw outputs under $OUT)
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-sandbox
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python -c "import sys; print(sys.version)"
  python -c "from grader.processes import sandbox; print('sandbox probe:', repr(sandbox.available()) or 'works')"
} > "$OUT/host.txt" 2>&1
t0=$(date +%s%N)
python -m grader 08 --solutions --json "$OUT/grade08.json" > "$OUT/grade08.log" 2>&1
echo "grade 08 --solutions: exit $? in $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$OUT/host.txt"
python -m pytest -q -n 4 -m gpu -p no:cacheprovider tests/test_attacks.py tests/test_warm.py tests/test_sandbox.py > "$OUT/gpu-attacks.log" 2>&1
echo "gpu attack tests: exit $?" >> "$OUT/host.txt"
python scripts/bench_grader.py --repeat 4 --sandbox --only "stubs,gemv" --json "$OUT/bench_grader.json" \
  > "$OUT/bench_grader.log" 2>&1
echo "bench_grader: exit $?" >> "$OUT/host.txt"
cat "$OUT/host.txt"; tail -5 "$OUT/gpu-attacks.log"; cat "$OUT/bench_grader.log"
