#!/usr/bin/env bash
# Puzzle 07 on the CUDA cores: block parameters for the bench case (M = N = 4096, D = 64), timed on the GPU.
# Each variant is checked on the case, then timed against torch's SDPA; one line each, best last.
#     source .gpu/env.sh && bash scripts/p07/sweep_cuda_cores.sh
# Registers and shared memory per block, as ptxas reports them for sm_90a (compiled on a CPU, no spills
# in any of these): flash_attention 64x64 / 128 threads 128 regs, 40 KiB; 64x64 / 256 threads 79 regs;
# 128x64 / 256 threads 122 regs, 64 KiB; 64x32 / 128 threads 96 regs, 24 KiB; 32x64 / 128 threads 80 regs;
# 128x128 / 256 threads 255 regs, 112 KiB.
set -euo pipefail
cd "$(dirname "$0")/../.."

variants=(
    '{"BLOCK_M": 64, "BLOCK_N": 64, "THREADS": 256}'
    '{"BLOCK_M": 64, "BLOCK_N": 64, "THREADS": 128}'
    '{"BLOCK_M": 128, "BLOCK_N": 64, "THREADS": 256}'
    '{"BLOCK_M": 64, "BLOCK_N": 32, "THREADS": 128}'
    '{"BLOCK_M": 32, "BLOCK_N": 64, "THREADS": 128}'
    '{"BLOCK_M": 128, "BLOCK_N": 32, "THREADS": 256}'
    '{"BLOCK_M": 128, "BLOCK_N": 128, "THREADS": 256}'
)
for kernel in flash_attention attention_two_pass; do
    echo "== 07 $kernel large_4096"
    python scripts/sweep.py 07 "$kernel" large_4096 "${variants[@]}"
done
