#!/usr/bin/env bash
# Issue 27 on the H200: --profile (Nsight Compute) for every kernel of the named puzzles' solutions, then a
# summary of the figures each gave. Usage on the device: bash scripts/profile/h200_profile.sh "01 02 03" NAME
# Writes $OUT/profile_NAME.txt (the command, each run's wall time, exit code and report) and
# $OUT/profile_NAME.tar.xz (the --json documents).
set -u
OUT=${OUT:-/tmp/profile_out}; mkdir -p "$OUT"
PUZZLES=${1:-"01 02 03 04 05 06 07 08 09 10"}; NAME=${2:-all}
WORK=$(mktemp -d); LOG="$OUT/profile_$NAME.txt"
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)" > "$LOG"
for id in $PUZZLES; do
  kernels=$(python3 - "$id" <<'PY'
import sys
from pathlib import Path
from grader.discover import load_module, load_puzzle
spec = next(Path("solutions").glob(f"p{sys.argv[1]}_*.py"))
puzzle = load_puzzle(load_module(spec))
print(",".join(k.function for k in puzzle.kernels if any(c.bench for c in k.cases)))
PY
)
  command="python -m grader $id --solutions --profile $kernels --json $WORK/p$id.json"
  start=$(date +%s)
  $command > "$WORK/p$id.out" 2>&1
  code=$?
  echo "## $command -> exit $code in $(( $(date +%s) - start )) s" >> "$LOG"
  cat "$WORK/p$id.out" >> "$LOG"
  tar -C "$WORK" -cJf "$OUT/profile_$NAME.tar.xz" .  # after each puzzle: a run cut short keeps what it made
done
python3 - "$WORK" >> "$LOG" <<'PY'
import json, sys
from pathlib import Path
print("\n# summary: kernel | mode | us yours/course | DRAM% | tensor% | FMA% | occ% (limit) | L2 hit% | sector use% | bank conflict% | top stall | problem")
for path in sorted(Path(sys.argv[1]).glob("p*.json")):
    for r in json.loads(path.read_text()).get("results", []):
        p = r.get("profile") or {}
        y, c = p.get("yours", {}), p.get("reference", {})
        stall = (y.get("stalls") or [["-", 0]])[0]
        print(f"{r['puzzle']} {r['kernel']} [{r['status']}] | {p.get('mode')} | {y.get('duration_us')}/{c.get('duration_us')} | "
              f"{y.get('dram_pct')} | {y.get('tensor_pct')} | {y.get('fma_pct')} | {y.get('achieved_occupancy_pct')} ({y.get('occupancy_limit')}) | "
              f"{y.get('l2_hit_pct')} | {y.get('sector_use_pct')} | {y.get('bank_conflict_pct')} | {stall[0]} {stall[1]} | {p.get('problem', '')[:120]}")
PY
tar -C "$WORK" -cJf "$OUT/profile_$NAME.tar.xz" .
