# Call 3 (twelfth session): the runs behind p08-notes.md and p08-flash-attention.md (issue 38: pages from raw data)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
python -m scripts.gpu_check notes-p08 --budget 555 > $OUT/notes-p08.txt 2>&1
echo done
