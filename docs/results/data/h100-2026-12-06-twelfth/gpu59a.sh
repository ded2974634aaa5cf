# Call 1 (twelfth session): first-hour (issue 37), the two layout attacks on the GPU, dequant_gemv x3 (issue 39)
set -x
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
timeout 100 python -m pytest -q -p no:cacheprovider -rA -m gpu -n 2 tests/test_attacks.py -k "layout_of_the_output or layout_reads_memory" > $OUT/layout-attacks.txt 2>&1
timeout 300 python -m scripts.gpu_check first-hour --budget 280 > $OUT/first-hour.txt 2>&1
for r in 1 2 3; do timeout 60 python -m grader 10 --solutions --bench --repeat 5 --exact --case decode_1x8192x8192_g128 -k dequant_gemv,dequant_matmul_decode >> $OUT/dequant-decode.txt 2>&1; done
echo done
