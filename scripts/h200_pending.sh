#!/usr/bin/env bash
# Every measurement the course's prose and results pages wait for (docs/results/pending-h200.md), in three
# device calls of under ten minutes each. From the project root on the GPU machine, with .gpu/ built:
#     source .gpu/env.sh && bash scripts/h200_pending.sh bench|new|experiments
# Each part writes its raw output under $OUT (the device tool's folder), or ./h200-pending/ without it.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-h200-pending}
mkdir -p "$out"
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-cache-pending}
case "${1:-}" in
bench)  # issue 29: one whole bench run with spreads (--repeat 5 is the default), then gemv three times
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
        --format=csv > "$out/nvidia-smi.csv"
    python -m grader --solutions --bench --json "$out/bench.json" > "$out/bench.txt" 2>&1
    for run in 1 2 3; do
        python -m grader 08 --solutions --bench -k gemv --exact --json "$out/gemv$run.json" > "$out/gemv$run.txt" 2>&1
    done
    ;;
new)  # issue 28: the kernels that changed (07 on the CUDA cores, 08's moved flash attention) timed and profiled
    bash scripts/p07/sweep_cuda_cores.sh > "$out/p07-sweep.txt" 2>&1
    bash scripts/profile/h200_profile.sh "07 08" p07-08 > "$out/profiles.txt" 2>&1
    python scripts/p08/intrinsics.py --json "$out/p08-intrinsics.json" > "$out/p08-intrinsics.txt" 2>&1
    # issue 29: the channels-last convolution's blocks, then its warp-specialized (TMA) build alone and last
    # (its siblings' warp-specialized builds stop with "illegal instruction", which ends the process)
    python scripts/sweep.py 09 conv1d_channels_last large_256_131072_k5 '{}' '{"BLOCK_C": 32}' '{"STAGES": 4}' \
        '{"BLOCK_O": 256, "THREADS": 256}' > "$out/p09-channels-last.txt" 2>&1
    python scripts/sweep.py 09 conv1d_channels_last large_256_131072_k5 \
        '{"_pass": {"tl.disable_warp_specialized": false}}' >> "$out/p09-channels-last.txt" 2>&1
    ;;
experiments)  # issue 28: the notebooks' experiments and matmul_tuned's ablation
    timeout 300 python scripts/p08/tuned_ablation.py "$out/p08-ablation.json" > "$out/p08-ablation.txt" 2>&1
    bash scripts/h200_experiments_p01_p06.sh > "$out/experiments-p01-p06.txt" 2>&1
    bash scripts/h200_experiments_p09_p10.sh > "$out/experiments-p09-p10.txt" 2>&1
    ;;
*)
    echo "usage: bash scripts/h200_pending.sh bench|new|experiments" >&2
    exit 2
    ;;
esac
