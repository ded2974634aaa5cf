#!/usr/bin/env bash
# Issue 36 on the H200: the hermetic judge's guarantees where the kernels run on the GPU. From the project root on
# the GPU machine, with .gpu/ built:   source .gpu/env.sh && bash scripts/h200_hermetic.sh grade|check|attacks
# Each part writes its raw output under $OUT (the device tool's folder), or ./h200-hermetic/ without it.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-h200-hermetic}
mkdir -p "$out"
git rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-cache-hermetic}
timed() { local name=$1; shift; local start=$(date +%s%N); "$@"; local code=$?;
          echo "$name exit=$code ms=$(( ($(date +%s%N) - start) / 1000000 ))" >> "$out/times.txt"; }
case "${1:-}" in
grade)  # every reference on the GPU through the renamed, allow-listed TIR and the allow-list sandbox
    timed sandbox-cost python scripts/sandbox_cost.py > "$out/sandbox-cost.txt" 2>&1
    timed solutions python -m grader --solutions --json "$out/solutions.json" > "$out/solutions.txt" 2>&1
    ;;
check)  # one sandboxed check, and what the sandbox shows a file that looks around
    timed check python -m grader 08 --solutions -k gemv --exact > "$out/check.txt" 2>&1
    ;;
attacks)  # every attack file on the GPU, the planted files, the sandbox's and warm server's own tests
    timed attacks-gpu python -m pytest -q -n 4 -m gpu tests/test_attacks.py tests/test_warm.py -rs \
        > "$out/attacks-gpu.txt" 2>&1
    timed hermetic python -m pytest -q -n 3 tests/test_hermetic.py tests/test_sandbox.py tests/test_tir_names.py \
        tests/test_warm.py tests/test_attacks.py -k "hermetic or sandbox or names or secret or forked_tracer or fork_bomb" \
        -rs > "$out/hermetic.txt" 2>&1
    ;;
*) echo "usage: $0 grade|check|attacks" >&2; exit 2 ;;
esac
