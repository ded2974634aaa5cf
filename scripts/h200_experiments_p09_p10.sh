#!/usr/bin/env bash
# The settings of puzzles 09 and 10's notebook experiments that have no H200 time on a results page
# (docs/results/p09-p10-notes.md, "Not yet measured"), each timed as --bench times it, output to stdout.
# From the project root, with .gpu/ built: source .gpu/env.sh && bash scripts/h200_experiments_p09_p10.sh
set -u
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-cache-experiments}
python scripts/sweep.py 09 conv1d_im2col large_256_131072_k5 '{}' '{"STAGES": 2}' '{"STAGES": 4}' '{"BLOCK_C": 16}'
python scripts/sweep.py 10 dequant_matmul decode_16x8192x8192_g128 '{}' '{"STAGES": 2}' '{"STAGES": 8}' '{"BLOCK_N": 32}'
python scripts/sweep.py 10 dequantize_int4 large_8192_g128 '{}' '{"BLOCK_N": 128}' '{"BLOCK_K": 64}'
python scripts/sweep.py 10 dequant_matmul_decode decode_16x8192x8192_g128 '{}' '{"BLOCK_N": 32}' '{"THREADS": 256}'
