#!/usr/bin/env bash
# Puzzle 07 on the CUDA cores: block parameters for the bench case (M = 16384, N = 4096, D = 64), timed on the GPU.
# Each variant is checked on the case, then timed against torch's SDPA; one line each, best last.
#     source .gpu/env.sh && bash scripts/p07/sweep_cuda_cores.sh
# Registers per thread and shared memory per block as ptxas reports them for sm_90a (compiled on a CPU
# with grader.teaching.experiments.resource_usage at M = N = 4096; "spills": ptxas spills to local memory):
#   BLOCK_M x BLOCK_N / threads   flash_attention      attention_two_pass    shared
#   64 x 64 / 256                 79 regs              88 regs               40 KiB   (the bench case)
#   64 x 64 / 128                 128 regs             125 regs              40 KiB
#   128 x 64 / 256                122 regs             114 regs              64 KiB
#   64 x 32 / 256                 56 regs              168 regs              24 KiB
#   64 x 32 / 128                 96 regs              255 regs, spills      24 KiB
#   32 x 64 / 128                 80 regs              94 regs               28 KiB
#   128 x 32 / 256                95 regs              255 regs, spills      40 KiB
#   128 x 128 / 256               255 regs             255 regs, spills      112 KiB
# No variant uses the Tensor Cores (no mma/wgmma in the generated CUDA).
set -euo pipefail
cd "$(dirname "$0")/../.."

variants=(
    '{"BLOCK_M": 64, "BLOCK_N": 64, "THREADS": 256}'
    '{"BLOCK_M": 64, "BLOCK_N": 64, "THREADS": 128}'
    '{"BLOCK_M": 128, "BLOCK_N": 64, "THREADS": 256}'
    '{"BLOCK_M": 64, "BLOCK_N": 32, "THREADS": 256}'
    '{"BLOCK_M": 64, "BLOCK_N": 32, "THREADS": 128}'
    '{"BLOCK_M": 32, "BLOCK_N": 64, "THREADS": 128}'
    '{"BLOCK_M": 128, "BLOCK_N": 32, "THREADS": 256}'
    '{"BLOCK_M": 128, "BLOCK_N": 128, "THREADS": 256}'
)
for kernel in flash_attention attention_two_pass; do
    echo "== 07 $kernel large_16384x4096"
    python scripts/sweep.py 07 "$kernel" large_16384x4096 "${variants[@]}"
done

# The bench case's block at M = N = 4096 (64 blocks of 64 queries for 132 SMs), for comparison: the same
# solution file with the bench case's sizes replaced, graded under the same case name.
square="$(mktemp -d)/p07_square.py"
sed 's/{"M": 16384, "N": 4096, "D": 64}/{"M": 4096, "N": 4096, "D": 64}/' solutions/p07_flash_attention.py > "$square"
for kernel in flash_attention attention_two_pass; do
    echo "== 07 $kernel at M = N = 4096"
    python scripts/sweep.py --file="$square" 07 "$kernel" large_16384x4096 '{}' '{"BLOCK_M": 32, "BLOCK_N": 64, "THREADS": 128}'
done
