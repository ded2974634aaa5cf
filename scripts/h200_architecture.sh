#!/usr/bin/env bash
# Issue 26's GPU check: after the grader's redesign, does everything still grade on the H200 as before?
#   bash scripts/h200_architecture.sh a   # every solution (one puzzle benched), every stub, GPU attack suite
#   bash scripts/h200_architecture.sh b   # GPU-marked tests across the suite; corpus files owed from issue 25
# Each part fits one 10-minute device call; raw outputs go to $OUT.
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-architecture
timed() {
  local label=$1; shift
  local t0=$(date +%s%N)
  "$@"; local rc=$?
  printf '>>> %-14s exit %s  wall %d ms\n' "$label" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$OUT/summary.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
if [ "${1:-a}" = a ]; then
  timed solutions timeout 330 python -m grader --solutions --json "$OUT/solutions.json" > "$OUT/solutions.log" 2>&1
  timed bench08 timeout 120 python -m grader 08 --solutions --bench -k gemv,matmul_pipelined --json "$OUT/bench08.json" \
    > "$OUT/bench08.log" 2>&1 &
  timed stubs timeout 150 python -m grader --json "$OUT/stubs.json" > "$OUT/stubs.log" 2>&1
  wait
  timed attacks-gpu timeout 330 python -m pytest -q -n 6 -m gpu -p no:cacheprovider tests/test_attacks.py \
    tests/test_warm.py tests/test_sandbox.py > "$OUT/attacks-gpu.log" 2>&1
  python - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for name in ("solutions", "stubs", "bench08"):
    try:
        doc = json.load(open(f"{out}/{name}.json"))
    except Exception as error:
        print(name, "no JSON:", error); continue
    results = doc["results"]
    print(name, len(results), "cases", doc["summary"])
    for r in results:
        bad = r["status"] != "passed" if name != "stubs" else r["status"] != "not_implemented"
        if bad:
            print("  ", r["puzzle"], r["kernel"], r["case"], r["status"], r["message"][:100])
PY
  tail -4 "$OUT/attacks-gpu.log"
  sed -n '/bench/,$p' "$OUT/bench08.log" | head -20
else
  owed="tests/wrong/p08/matmul_streamk_race_read_add_store.py tests/right/p09/conv1d_im2col_cols_from_global.py"
  owed="$owed $(ls tests/wrong/p10/unpack_*.py | tr '\n' ' ')"
  for f in $owed; do
    id=$(basename "$(dirname "$f")"); id=${id#p}
    kernel=$(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$f")
    python -m grader "$id" --file "$f" ${kernel:+-k "$kernel" --exact} --device cuda --json "/tmp/owed.json" > /dev/null 2>&1
    python - "$f" <<'PY'
import json, sys
doc = json.load(open("/tmp/owed.json"))
bad = [f"{r['case']}:{r['status']}" for r in doc["results"] if r["status"] != "passed"]
print(sys.argv[1], f"{len(doc['results']) - len(bad)} of {len(doc['results'])} passed;", " ".join(bad)[:300])
PY
  done > "$OUT/owed.txt" 2>&1 &
  timed gpu-tests timeout 540 python -m pytest -q -n 6 -m gpu -p no:cacheprovider --durations=10 tests \
    --deselect tests/test_attacks.py --deselect tests/test_warm.py --deselect tests/test_sandbox.py \
    > "$OUT/gpu-tests.log" 2>&1
  wait
  tail -25 "$OUT/gpu-tests.log"
  cat "$OUT/owed.txt"
fi
cat "$OUT/summary.txt"
