#!/usr/bin/env bash
# The right and wrong corpora on the GPU, one `python -m grader` per file as a learner runs it, several at
# once; raw JSON and logs in $OUT, then a verdict table (scripts/corpora_verdicts.py).
#   bash scripts/h200_corpora.sh right|wrong [JOBS] [STEM_FILTER_REGEX]
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT/$1"
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-corpora
which=$1; jobs=${2:-12}; filter=${3:-.}
git log -1 --format='%H %s' > "$OUT/commit.txt" 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
ls tests/$which/p*/*.py | grep -E "$filter" | while read -r f; do
  id=$(basename "$(dirname "$f")"); id=${id#p}
  kernel=$(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$f")
  echo "$id $kernel $f"
done > "$OUT/$which/todo.txt"
grade_one() {  # ID KERNEL FILE: grade it with every case on the GPU; json, log and exit code under $OUT
  local stem; stem=$(basename "$3" .py)
  local dir="$OUT/$WHICH/p$1"; mkdir -p "$dir"
  local t0=$(date +%s%N)
  timeout 300 python -m grader "$1" --file "$3" -k "$2" --exact --device cuda --json "$dir/$stem.json" \
    > "$dir/$stem.log" 2>&1
  echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" > "$dir/$stem.rc"
}
export -f grade_one; export OUT; export WHICH=$which
t0=$(date +%s)
xargs -P "$jobs" -L 1 bash -c 'grade_one "$0" "$1" "$2"' < "$OUT/$which/todo.txt"
echo "wall $(( $(date +%s) - t0 )) s for $(wc -l < "$OUT/$which/todo.txt") files, $jobs at once" | tee "$OUT/$which/wall.txt"
python scripts/corpora_verdicts.py "$which" "$OUT/$which" | tee "$OUT/$which/verdicts.txt"
