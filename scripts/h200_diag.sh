#!/usr/bin/env bash
# Where does the grader's fixed start-up time go on the H200, and the wrong kernels' verdicts.
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache2
t() { local t0=$(date +%s%N); "$@" > "$OUT/last.log" 2>&1; local rc=$?; printf "%-60s exit %s %6d ms\n" "$*" "$rc" $(( ($(date +%s%N) - t0) / 1000000 )); }
t python -c "import torch"
t python -c "import torch; torch.cuda.get_device_name()"
t python -c "import tilelang"
t python -c "import pytest"
python -X importtime -c "import tilelang" 2> "$OUT/importtime.txt"; sort -t'|' -k2 -n "$OUT/importtime.txt" | tail -12
t python -m grader 08 --solutions
t python -m grader 08 --solutions
t python -m grader 08
t env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m grader 08
wrong=(); for f in tests/wrong/p08/*.py; do wrong+=(--grade "08=$PWD/$f"); done
t python -m pytest -p grader.plugin -p no:cacheprovider -c grader/pytest.ini -q --tb=no "${wrong[@]}" --grade-json "$OUT/wrong.json" tests/wrong/p08
python scripts/wrong_table.py "$OUT/wrong.json"
