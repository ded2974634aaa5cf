#!/usr/bin/env bash
# The H200 checks of the trust boundary and of verdict fidelity, in parts that each fit one 10-minute
# device call. From the project root, with .gpu/ built by ../shared/gpu/make-bundle:
#   bash scripts/h200_session.sh a   # warm `python -m grader 08` before/after the split; attacks on the GPU
#   bash scripts/h200_session.sh all # every solution case on the GPU
#   bash scripts/h200_session.sh b   # GPU-marked tests: wrong kernels, adversarial, right-kernel corpus, zero grid
#   bash scripts/h200_session.sh g   # every solution case natively and with each older profile's lowering
# Part a wants .gpu/before.tar.xz: `git archive 292932c | xz > .gpu/before.tar.xz` (the tree before the split).
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-session
timed() {
  local label=$1; shift
  local t0=$(date +%s%N)
  "$@"; local rc=$?
  printf '>>> %-22s exit %s  wall %d ms\n' "$label" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )) | tee -a "$OUT/summary.txt"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
here=$PWD
if [ "${1:-a}" = a ]; then
  mkdir -p /tmp/before && tar -xJf .gpu/before.tar.xz -C /tmp/before
  # The cases both trees have (the later tree adds rect_* cases), so both do the same work.
  cases=large_4096,large_8192,long_k_64x8191,odd_127x129,odd_127x129x131,skinny_33x1024x200,square_256,tail_1000
  # Cold once (fills the shared compile cache: the split compiles the same TIR), then warm, alternating.
  timed after-solutions-cold timeout 300 python -m grader 08 --solutions --case $cases > "$OUT/after_cold.log" 2>&1
  for round in 1 2 3; do
    (cd /tmp/before && export PYTHONPATH=/tmp/site:/tmp/before && timed before-stubs-$round python -m grader 08 > "$OUT/before_stubs.log" 2>&1)
    timed after-stubs-$round python -m grader 08 > "$OUT/after_stubs.log" 2>&1
    (cd /tmp/before && export PYTHONPATH=/tmp/site:/tmp/before && timed before-solutions-$round python -m grader 08 --solutions --case $cases > "$OUT/before_solutions.log" 2>&1)
    timed after-solutions-$round python -m grader 08 --solutions --case $cases --json "$OUT/after_$round.json" > "$OUT/after_solutions.log" 2>&1
  done
  tail -n 3 "$OUT/before_solutions.log" "$OUT/after_solutions.log"
  python -c "import json, sys; print(json.load(open(sys.argv[1]))['runs'][0]['startup_seconds'])" "$OUT/after_3.json"
  timed attacks-gpu timeout 300 python -m pytest -q -m gpu -n 4 -p no:cacheprovider tests/test_attacks.py > "$OUT/attacks.log" 2>&1
  tail -n 5 "$OUT/attacks.log"
elif [ "$1" = all ]; then
  timed all-solutions timeout 420 python -m grader --solutions --json "$OUT/solutions.json" > "$OUT/solutions.log" 2>&1
  python - "$OUT" <<'PY'
import json, sys
doc = json.load(open(f"{sys.argv[1]}/solutions.json"))
print("solutions", doc["summary"])
for r in doc["results"]:
    if r["status"] != "passed":
        print("  ", r["puzzle"], r["kernel"], r["case"], r["status"], r["message"][:120])
PY
elif [ "$1" = g ]; then
  # Natively (sm_90), and each older profile's block sizes and lowering turned into this GPU's code by
  # nvcc (-gencode arch=compute_XX,code=sm_90), the five side by side: compiling is most of the time.
  # ARCHS picks a subset (the five take ~8 minutes side by side; two calls of 3 and 2 are safer).
  for arch in ${ARCHS:-native sm_75 sm_80 sm_86 sm_89}; do
    flag=$([ $arch = native ] && echo "" || echo "--arch $arch")
    timed "solutions-$arch" timeout 540 python -m grader --solutions $flag --json "$OUT/$arch.json" > "$OUT/$arch.log" 2>&1 &
  done
  wait
  [ -n "${SKIP_GPU_TESTS:-}" ] || timed gpu-tests-gpus timeout 200 python -m pytest -q -m gpu -n 4 -p no:cacheprovider tests/test_gpus.py > "$OUT/gpus_tests.log" 2>&1
  tail -3 "$OUT/gpus_tests.log"
  python - "$OUT" <<'PY'
import json, sys
import os
for arch in os.environ.get("ARCHS", "native sm_75 sm_80 sm_86 sm_89").split():
    try:
        doc = json.load(open(f"{sys.argv[1]}/{arch}.json"))
    except OSError:
        print(arch, "no result"); continue
    print(arch, doc["runs"][0]["device"], doc["summary"])
    for r in doc["results"]:
        if r["status"] != "passed":
            print("  ", r["puzzle"], r["kernel"], r["case"], r["status"], r["message"][:140])
PY
else
  timed gpu-tests timeout 570 python -m pytest -q -m gpu -n 8 -p no:cacheprovider tests/test_grader_e2e.py \
    tests/test_adversarial.py tests/test_right.py tests/test_attacks.py > "$OUT/gpu_tests.log" 2>&1
  tail -25 "$OUT/gpu_tests.log"
fi
cat "$OUT/summary.txt"
