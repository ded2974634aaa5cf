#!/usr/bin/env bash
# Issue 37 on the H200: how long a learner's check takes, cold (empty compile caches) and warm, on the CPU path
# (--device cpu: what a laptop without a GPU does) and on the GPU, for puzzles 01, 07 and 08; then every case of
# puzzle 07 on the GPU (its new large-logits case included). From the project root on the GPU machine:
#   source .gpu/env.sh && bash scripts/h200_first_hour.sh
# Writes $OUT/first-hour.txt (one line per check: puzzle, kernel, device, cold or warm, exit code, seconds) and
# each check's output, or ./h200-first-hour/ without $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-h200-first-hour}
mkdir -p "$out"
work=$(mktemp -d)
cp solutions/p01_copy.py solutions/p07_flash_attention.py solutions/p08_matrix.py "$work/"
for device in cpu cuda; do
  export TILELANG_CACHE_DIR="$work/cache-$device" XDG_CACHE_HOME="$work/xdg-$device"
  for check in "01 copy_tiles p01_copy.py" "07 flash_attention p07_flash_attention.py" "08 gemv p08_matrix.py"; do
    set -- $check
    for state in cold warm; do
      start=$(date +%s%N)
      python -m grader "$1" -k "$2" --device "$device" --file "$work/$3" > "$out/$1-$2-$device-$state.txt" 2>&1
      code=$?
      echo "$1 $2 $device $state exit=$code s=$(( ($(date +%s%N) - start) / 1000000 ))e-3" >> "$out/first-hour.txt"
    done
  done
done
python -m grader 07 --solutions > "$out/p07-gpu.txt" 2>&1
echo "07 --solutions exit=$?" >> "$out/first-hour.txt"
