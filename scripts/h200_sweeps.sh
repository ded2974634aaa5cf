#!/usr/bin/env bash
# The roofline issue's experiments on the H200, one device call (about 9 minutes):
#   p10 decode candidates (p10; p10decode: the decode rung with more blocks), the p08 last-wave candidates, and block-parameter sweeps of gemv,
#   flash_attention_tensor_cores (as written, and with the exponent as one FFMA) and conv1d_im2col.
# From the project root, with .gpu/ built: source .gpu/env.sh && bash scripts/h200_sweeps.sh [parts]
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export TILELANG_CACHE_DIR=${TILELANG_CACHE_DIR:-/tmp/tilelang-cache-sweeps}
parts=${1:-"p10 streamk gemv flash conv"}
step() { local name=$1 limit=$2; shift 2; local t0=$(date +%s)
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1; echo ">>> $name exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"; }
for part in $parts; do case $part in
  p10) step p10 150 python scripts/p10/sweep.py --out "$OUT" ;;
  streamk) step streamk 300 python scripts/streamk/sweep.py ;;
  gemv) step gemv 90 python scripts/sweep.py 08 gemv large_8192 '{}' '{"BLOCK_M": 8, "BLOCK_K": 512}' \
      '{"BLOCK_M": 16, "BLOCK_K": 512, "THREADS": 256}' '{"BLOCK_M": 32, "BLOCK_K": 256, "THREADS": 256}' \
      '{"BLOCK_M": 4, "BLOCK_K": 1024}' '{"BLOCK_M": 8, "BLOCK_K": 1024, "THREADS": 256}' ;;
  flash) step flash 150 python scripts/sweep.py 08 flash_attention_tensor_cores large_16384 '{}' '{"STAGES": 1}' '{"BLOCK_N": 64}' ;
    step flash_ffma 150 python scripts/sweep.py --file=scripts/p08/flash_ffma.py 08 flash_attention_tensor_cores large_16384 '{}' \
      '{"STAGES": 1}' '{"BLOCK_N": 64}' '{"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 3}' ;;
  conv) step conv 120 python scripts/sweep.py 09 conv1d_im2col large_256_131072_k5 '{}' '{"BLOCK_L": 256}' \
      '{"BLOCK_C": 64}' '{"STAGES": 4}' '{"BLOCK_L": 256, "THREADS": 256}' '{"BLOCK_O": 256, "BLOCK_L": 128, "THREADS": 256}' ;;
  shifted) step conv_shifted 200 python scripts/sweep.py --file=scripts/p09/shifted.py 09 conv1d_im2col \
      large_256_131072_k5 '{"STAGES": 2}' '{"STAGES": 2, "_pass": {"tl.disable_warp_specialized": true}}' \
      '{"BLOCK_C": 16, "STAGES": 3}' '{"BLOCK_C": 16, "STAGES": 4}' '{"BLOCK_L": 256, "BLOCK_C": 16, "STAGES": 2, "THREADS": 256}' \
      '{"BLOCK_O": 256, "BLOCK_C": 16, "STAGES": 3, "THREADS": 256}' ;
    step conv_im2col 100 python scripts/sweep.py 09 conv1d_im2col large_256_131072_k5 '{}' ;;
  wsfault) step ws_fault 200 python scripts/p09/ws_fault.py ;;
  # Puzzle 10's decode rung with more blocks than SMs: BLOCK_N = 32 or 16 gives 256 or 512 blocks (the MMA
  # falls back from wgmma to mma.sync below 64 rows), so more than one warpgroup unpacks on each SM.
  p10decode) step p10_decode 200 python scripts/sweep.py 10 dequant_matmul_decode decode_16x8192x8192_g128 '{}' \
      '{"BLOCK_N": 32}' '{"BLOCK_N": 32, "THREADS": 64}' '{"BLOCK_N": 16, "THREADS": 64}' '{"BLOCK_N": 16, "THREADS": 32}' \
      '{"BLOCK_N": 32, "STAGES": 6}' '{"STAGES": 6}' '{"_pass": {"tl.disable_warp_specialized": true}}' ;;
  # More unpacking warps per SM without more blocks: two or four consumer warpgroups share one 64-row tile
  # (BLOCK_K stays a divisor of the group, 128: the kernel reads one scale per row per K step).
  p10threads) step p10_threads 200 python scripts/sweep.py 10 dequant_matmul_decode decode_16x8192x8192_g128 \
      '{"THREADS": 256}' '{"THREADS": 256, "_pass": {"tl.disable_warp_specialized": true}}' \
      '{"THREADS": 512, "_pass": {"tl.disable_warp_specialized": true}}' '{"BLOCK_K": 64, "STAGES": 6}' \
      '{"BLOCK_K": 64, "STAGES": 6, "THREADS": 256, "_pass": {"tl.disable_warp_specialized": true}}' \
      '{"BLOCK_N": 128, "THREADS": 256}' ;;
  implicit) step implicit_fault 300 python scripts/p09/implicit_fault.py ;;
  # The implicit-GEMM rung as the course now builds it (warp specialization off), at its bench case.
  implicitbench) step implicit_bench 150 python scripts/sweep.py 09 conv1d_implicit large_256_131072_k5 '{}' \
      '{"BLOCK_C": 32}' '{"STAGES": 4}' '{"BLOCK_C": 32, "STAGES": 2}' '{"BLOCK_L": 256, "THREADS": 256}' ;;
  # flash_attention_tensor_cores with P V of key tile j-1 issued before the softmax of tile j (scripts/p08/flash_overlap.py).
  flashoverlap) step flash_overlap 150 python scripts/sweep.py --file=scripts/p08/flash_overlap.py 08 flash_attention_tensor_cores \
      large_16384 '{"OVERLAP": 0}' '{"OVERLAP": 1}' '{"OVERLAP": 2}' '{"OVERLAP": 2, "STAGES": 4}' ;;
esac; done
grep -h "best:\|floor\|^kernel\|x *$" "$OUT"/*.txt | head -0
cat "$OUT/summary.txt"
