# Call 6 (twelfth session): the end-to-end part of 01-07 at ff83156 (+ check-times.md edit), tarred
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
mkdir -p /tmp/o6
OUT=/tmp/o6 python -m scripts.gpu_check e2e --budget 540 > /tmp/o6/e2e.txt 2>&1
tar -C /tmp -czf $OUT/call6.tgz o6
echo done
