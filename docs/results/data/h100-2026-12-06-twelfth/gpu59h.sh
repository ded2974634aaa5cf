# Call 8 (twelfth session): the end-to-end part of 08-10, cut at the device time left; tarred
export TILELANG_PRINT_ON_COMPILATION=0
mkdir -p /tmp/o8
OUT=/tmp/o8 python -m scripts.gpu_check e2e-heavy --budget 285 > /tmp/o8/e2e-heavy.txt 2>&1
tar -C /tmp -czf $OUT/call8.tgz o8
echo done
