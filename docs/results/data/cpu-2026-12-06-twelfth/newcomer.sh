#!/usr/bin/env bash
# A newcomer from the README only, on this 2-core machine with nvcc hidden: each step timed.
set -uo pipefail
rm -rf /tmp/newcomer && git clone -q /work/main /tmp/newcomer && cd /tmp/newcomer
step() { local name="$1"; shift; local t0=$(date +%s.%N); "$@" > "/root/s59/nc-$name.txt" 2>&1; local code=$?; local t1=$(date +%s.%N); printf "%-28s exit %3s  %6.1f s\n" "$name" "$code" "$(echo "$t1 - $t0" | bc)"; }
python3 -m venv /tmp/newcomer/.venv
export PATH=/tmp/newcomer/.venv/bin:$PATH
unset CUDA_HOME CUDA_PATH
export XDG_CACHE_HOME=/tmp/newcomer/.cache TILELANG_CACHE_DIR=/tmp/newcomer/.tlcache
step install pip install --quiet torch==2.13.0 -e ".[nvcc]"
echo "nvcc: $(command -v nvcc)"
step grade-08-stubs python -m grader 08
python - <<'PY'
import re
sol = open("solutions/p08_matrix.py").read(); puz = open("puzzles/p08_matrix.py").read()
def body(text, name):
    start = text.index(f"def {name}(")
    b = text.index("# TODO begin", start); e = text.index("# TODO end", b)
    return b, e
sb, se = body(sol, "gemv"); pb, pe = body(puz, "gemv")
open("puzzles/p08_matrix.py", "w").write(puz[:pb] + sol[sb:se] + puz[pe:])
PY
step gemv-solved-cold python -m grader 08 -k gemv
step gemv-solved-warm python -m grader 08 -k gemv
sed -i '0,/T.clear(/s/T.clear(\([a-z_]*\))/pass  # T.clear(\1)/' puzzles/p08_matrix.py
grep -n "pass  # T.clear" puzzles/p08_matrix.py | head -2
step gemv-no-clear python -m grader 08 -k gemv
step explain python -m grader 08 --explain gemv --case odd_127x129
step hint python -m grader 08 --hint gemv --level 2
step typo-k python -m grader 08 -k gemvv
step profile python -m grader 08 --profile gemv
step gemv-full python -m grader 08 -k gemv --full
