#!/usr/bin/env bash
# The right and wrong corpora on the GPU, one `python -m grader` per file as a learner runs it, several at
# once; then a verdict table per corpus (scripts/corpora_verdicts.py). The per-file results come back as
# $OUT/corpora.tar.gz (the device returns only a few files).
#   bash scripts/h200_corpora.sh [JOBS] [SECONDS] [FIRST...]
# SECONDS (default 520) bounds the whole grading, so a device call returns in time with what finished;
# files named FIRST (paths) are graded before the others.
set -u
source .gpu/env.sh || exit 1
OUT=${OUT:-/tmp/out}
export TILELANG_CACHE_DIR=/tmp/tilelang-cache-corpora
jobs=${1:-12}; budget=${2:-520}; shift 2 || true
RESULTS=/tmp/corpora; mkdir -p "$RESULTS/right" "$RESULTS/wrong" "$OUT"
{ git log -1 --format='%H %s'; git status --short | head -20; nvidia-smi --query-gpu=name,driver_version \
  --format=csv,noheader; } > "$RESULTS/context.txt" 2>&1
line() {  # KIND PATH -> "KIND ID KERNEL PATH"
  local id; id=$(basename "$(dirname "$2")"); id=${id#p}
  echo "$1 $id $(sed -n 's/^KERNEL = "\(.*\)"/\1/p' "$2") $2"
}
{ for f in "$@"; do line "$(echo "$f" | cut -d/ -f2)" "$f"; done
  for kind in right wrong; do for f in tests/$kind/p*/*.py; do
    case " $* " in *" $f "*) ;; *) line "$kind" "$f" ;; esac
  done; done; } > "$RESULTS/todo.txt"
for kind in right wrong; do grep "^$kind " "$RESULTS/todo.txt" | cut -d' ' -f2- > "$RESULTS/$kind/todo.txt"; done
grade_one() {  # KIND ID KERNEL FILE: grade it with every case on the GPU; json, log and exit code kept
  local stem; stem=$(basename "$4" .py)
  local dir="$RESULTS/$1/p$2"; mkdir -p "$dir"
  local t0=$(date +%s%N)
  timeout 300 python -m grader "$2" --file "$4" -k "$3" --exact --device cuda --json "$dir/$stem.json" \
    > "$dir/$stem.log" 2>&1
  echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))" > "$dir/$stem.rc"
}
export -f grade_one; export RESULTS
t0=$(date +%s)
timeout "$budget" xargs -P "$jobs" -L 1 bash -c 'grade_one "$0" "$1" "$2" "$3"' < "$RESULTS/todo.txt"
echo "wall $(( $(date +%s) - t0 )) s for $(wc -l < "$RESULTS/todo.txt") files, $jobs at once" | tee "$RESULTS/wall.txt"
for kind in right wrong; do
  python scripts/corpora_verdicts.py "$kind" "$RESULTS/$kind" > "$RESULTS/$kind/verdicts.txt"
  cp "$RESULTS/$kind/verdicts.txt" "$OUT/$kind-verdicts.txt"
  grep -E "^(right|wrong):|DISAGREES" "$RESULTS/$kind/verdicts.txt"
done
tar -czf "$OUT/corpora.tar.gz" -C "$RESULTS" .
