#!/usr/bin/env bash
# The right and wrong corpora on the GPU, one `python -m grader` per file as a learner runs it, several at
# once; raw JSON and logs in $OUT, then a verdict table (scripts/corpora_verdicts.py).
#   bash scripts/h200_corpora.sh right|wrong [JOBS] [STEM_FILTER_REGEX] [SECONDS]
# SECONDS (default 520) bounds the whole grading, so a device call returns in time with what finished;
# the per-file results come back as $OUT/WHICH.tar.gz (the device returns only a few files).
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-corpora
which=$1; jobs=${2:-12}; filter=${3:-.}; budget=${4:-520}
RESULTS=/tmp/corpora; mkdir -p "$RESULTS/$which" "$OUT"
{ git log -1 --format='%H %s'; git status --short | head -20; nvidia-smi --query-gpu=name,driver_version \
  --format=csv,noheader; } > "$RESULTS/$which/context.txt" 2>&1
ls tests/$which/p*/*.py | grep -E "$filter" | while read -r f; do
  id=$(basename "$(dirname "$f")"); id=${id#p}
  kernel=$(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$f")
  echo "$id $kernel $f"
done > "$RESULTS/$which/todo.txt"
grade_one() {  # ID KERNEL FILE: grade it with every case on the GPU; json, log and exit code under $OUT
  local stem; stem=$(basename "$3" .py)
  local dir="$RESULTS/$WHICH/p$1"; mkdir -p "$dir"
  local t0=$(date +%s%N)
  timeout 300 python -m grader "$1" --file "$3" -k "$2" --exact --device cuda --json "$dir/$stem.json" \
    > "$dir/$stem.log" 2>&1
  echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" > "$dir/$stem.rc"
}
export -f grade_one; export RESULTS; export WHICH=$which
t0=$(date +%s)
timeout "$budget" xargs -P "$jobs" -L 1 bash -c 'grade_one "$0" "$1" "$2"' < "$RESULTS/$which/todo.txt"
echo "wall $(( $(date +%s) - t0 )) s for $(wc -l < "$RESULTS/$which/todo.txt") files, $jobs at once" \
  | tee "$RESULTS/$which/wall.txt"
python scripts/corpora_verdicts.py "$which" "$RESULTS/$which" > "$RESULTS/$which/verdicts.txt"
tail -40 "$RESULTS/$which/verdicts.txt"
cp "$RESULTS/$which/verdicts.txt" "$OUT/$which-verdicts.txt"
tar -czf "$OUT/$which.tar.gz" -C "$RESULTS" "$which"
