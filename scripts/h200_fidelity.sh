#!/usr/bin/env bash
# Issue 25's GPU checks besides the corpora: the instructor's nbgrader autograde on CUDA, the verified
# counts and refusals, puzzle 01's first-contact kernels, and each race kernel graded three times at once.
#   bash scripts/h200_fidelity.sh [SECONDS]      (raw logs in $OUT; SECONDS bounds the tests, default 300)
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-corpora
git log -1 --format='%H %s' > "$OUT/fidelity-commit.txt" 2>/dev/null || true
race_run() {  # FILE RUN: grade a race kernel on the GPU; one line: how many cases were wrong, which
  local id; id=$(basename "$(dirname "$1")"); id=${id#p}
  local kernel; kernel=$(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$1")
  local json="/tmp/race-$(basename "$1" .py)-$2.json"
  python -m grader "$id" --file "$1" -k "$kernel" --exact --device cuda --json "$json" > /dev/null 2>&1
  python - "$1" "$2" "$json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[3]))
bad = [r["case"] for r in doc["results"] if r["status"] != "passed"]
print(f"{sys.argv[1]} run {sys.argv[2]}: {len(bad)} of {len(doc['results'])} cases wrong: {' '.join(bad)}")
PY
}
export -f race_run
for f in tests/wrong/*/*_race_*.py; do for run in 1 2 3; do echo "$f $run"; done; done \
  | xargs -P 15 -L 1 bash -c 'race_run "$0" "$1"' | sort > "$OUT/races-on-gpu.txt"
cat "$OUT/races-on-gpu.txt"
timeout "${1:-300}" python -m pytest -q -n 6 -p no:cacheprovider tests/test_nbgrader.py tests/test_verified.py \
  tests/test_grader_e2e.py tests/test_concepts.py tests/test_right.py \
  -k "gpu_grades or solutions_build or refuse or (p01 and gpu) or p01_copy" > "$OUT/fidelity-tests.log" 2>&1
echo "fidelity tests: exit $?" | tee -a "$OUT/fidelity-tests.log"
tail -15 "$OUT/fidelity-tests.log"
