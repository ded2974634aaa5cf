# Call 4 (twelfth session): the runs behind p09-p10-notes.md; matmul_shared and the stream-K sweep again (call 3's
# copies were left out: the device tool returns at most 8 files, so everything is tarred here)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
mkdir -p /tmp/o4
OUT=/tmp/o4 python -m scripts.gpu_check notes-p09-p10 --budget 330 > /tmp/o4/notes-p09-p10.txt 2>&1
OUT=/tmp/o4 timeout 200 python scripts/sweep.py 08 matmul_shared large_4096 '{}' > /tmp/o4/shared.txt 2>&1
OUT=/tmp/o4/streamk timeout 200 python scripts/streamk/sweep.py > /tmp/o4/streamk.txt 2>&1
tar -C /tmp -czf $OUT/call4.tgz o4
echo done
