# Call 2 (twelfth session, nbgrader bundle): the nbgrader part (issue 43), whose tests now share test_nbgrader.gpu_course
set -x
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv > $OUT/nvidia-smi.csv 2>&1
export TILELANG_PRINT_ON_COMPILATION=0
timeout 500 python -m scripts.gpu_check nbgrader --budget 480 > $OUT/nbgrader.txt 2>&1
echo done
