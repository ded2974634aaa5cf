#!/usr/bin/env bash
# The settings of puzzles 01-06's notebook experiments (the bench(...) calls of their "Experiments to try"),
# each timed as --bench times it, beside the bench case's own setting ('{}'), output to stdout. The
# [measured] cells of those experiments quote these times; the run goes on docs/results/h200-experiments.md.
# From the project root, with .gpu/ built: source .gpu/env.sh && bash scripts/h200_experiments_p01_p06.sh
set -u
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-cache-experiments}
python scripts/sweep.py 01 copy_threads large_2p27 '{}' '{"BLOCK": 1024}' '{"BLOCK": 8192}' '{"BLOCK": 256, "THREADS": 512}'
python scripts/sweep.py 01 copy_serial large_2p27 '{}' '{"THREADS": 256}'
python scripts/sweep.py 02 add large_2p27 '{}' '{"BLOCK": 512, "THREADS": 128}' '{"BLOCK": 256, "THREADS": 256}'
python scripts/sweep.py 02 add_fragments large_2p27 '{}' '{"BLOCK": 2048}' '{"BLOCK": 32768}'
python scripts/sweep.py 03 outer_add_fragments large_16384 '{}' '{"BLOCK_M": 256, "BLOCK_N": 32}' '{"BLOCK_M": 1024, "BLOCK_N": 8}'
python scripts/sweep.py 04 mul_relu_forward large_8192x16384 '{}' '{"BLOCK_N": 512}' '{"BLOCK_M": 4, "BLOCK_N": 2048}'
python scripts/sweep.py 04 mul_relu_backward large_8192x16384 '{}' '{"BLOCK_N": 128}' '{"BLOCK_N": 32}'
python scripts/sweep.py 05 row_sum_tiled large_16384x8192 '{}' '{"BLOCK_N": 128}' '{"BLOCK_N": 2048}'
python scripts/sweep.py 06 softmax large_16384x8192 '{}' '{"THREADS": 128}' '{"THREADS": 512}'
python scripts/sweep.py 06 softmax_online large_4096x32768 '{}' '{"BLOCK_N": 1024}' '{"BLOCK_N": 8192}'
