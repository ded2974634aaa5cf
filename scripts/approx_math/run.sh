#!/usr/bin/env bash
# CUDA's approximate math against the simulator's (torch's) bits, for issue 36's approximate-math run
# (grader/pipeline/simulate/values.py APPROXIMATE_ULPS, tests/attacks/approximate_*.py).
# On the device: bash scripts/approx_math/run.sh   (builds with nvcc, writes $OUT/f32.bin and $OUT/f16.bin)
# Here, on the files it wrote:  python scripts/approx_math/analyse.py FOLDER
set -eu
OUT=${OUT:-/tmp/approx_math}; mkdir -p "$OUT"
here=$(dirname "$0")
nvcc -O3 -arch=sm_90a -o "$OUT/probe" "$here/probe.cu"
F="$OUT/f32.bin" H="$OUT/f16.bin" "$OUT/probe"
rm -f "$OUT/probe"
