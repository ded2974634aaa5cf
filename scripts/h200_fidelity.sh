#!/usr/bin/env bash
# Issue 25's GPU checks besides the corpora: the instructor's nbgrader autograde on CUDA, the verified
# counts and refusals, puzzle 01's first-contact kernels, and the race kernels' GPU behaviour repeated.
#   bash scripts/h200_fidelity.sh        (raw logs in $OUT)
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-corpora
git log -1 --format='%H %s' > "$OUT/fidelity-commit.txt" 2>/dev/null || true
python -m pytest -q -n 6 -p no:cacheprovider tests/test_nbgrader.py tests/test_verified.py tests/test_grader_e2e.py \
  tests/test_concepts.py tests/test_right.py \
  -k "gpu_grades or solutions_build or refuse or (p01 and gpu) or p01_copy" > "$OUT/fidelity-tests.log" 2>&1
echo "fidelity tests: exit $?" | tee -a "$OUT/fidelity-tests.log"
tail -15 "$OUT/fidelity-tests.log"
# Each race kernel three times on the GPU: which cases fail each time (a race shows in some runs only)
for f in tests/wrong/*/*_race_*.py; do
  id=$(basename "$(dirname "$f")"); id=${id#p}; kernel=$(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$f")
  for run in 1 2 3; do
    python -m grader "$id" --file "$f" -k "$kernel" --exact --device cuda --json /tmp/race.json > /dev/null 2>&1
    python - "$f" "$run" <<'PY' >> "$OUT/races-on-gpu.txt"
import json, sys
doc = json.load(open("/tmp/race.json"))
bad = [r["case"] for r in doc["results"] if r["status"] != "passed"]
print(f"{sys.argv[1]} run {sys.argv[2]}: {len(bad)} of {len(doc['results'])} cases wrong: {' '.join(bad)}")
PY
  done
done
cat "$OUT/races-on-gpu.txt"
