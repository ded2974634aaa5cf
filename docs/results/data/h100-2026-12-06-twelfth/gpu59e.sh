# Call 5 (twelfth session): the gpu-marked tests part at ff83156 (+ check-times.md edit), tarred
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
mkdir -p /tmp/o5
OUT=/tmp/o5 python -m scripts.gpu_check tests --budget 545 > /tmp/o5/tests.txt 2>&1
tar -C /tmp -czf $OUT/call5.tgz o5
echo done
