#!/usr/bin/env bash
# What Nsight Compute on the H200 names the figures --profile reads: one torch fp16 GEMM and one copy, profiled
# with the sections grader.processes.profiler asks for, raw page as CSV. Run on the device with $OUT set.
set -u
OUT=${OUT:-/tmp/ncu_probe}; mkdir -p "$OUT"
{ which ncu; ncu --version; } > "$OUT/version.txt" 2>&1
cat > /tmp/probe.py <<'PY'
import torch
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
x = torch.empty(1 << 28, device="cuda", dtype=torch.uint8)
y = torch.empty_like(x)
for _ in range(3):
    a @ b; y.copy_(x)
torch.cuda.synchronize()
torch.cuda.profiler.start()
a @ b
y.copy_(x)
torch.cuda.synchronize()
torch.cuda.profiler.stop()
PY
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SourceCounters"
start=$(date +%s.%N)
ncu --profile-from-start off --clock-control none $SECTIONS --csv --page raw --print-units base \
    --log-file "$OUT/raw.csv" python3 /tmp/probe.py > "$OUT/probe_stdout.txt" 2>&1
echo "rc=$? seconds=$(echo "$(date +%s.%N) - $start" | bc)" >> "$OUT/version.txt"
ncu --query-metrics > /tmp/all_metrics.txt 2>&1
grep -E -i "tensor|bank|stalled|sector|dram__|lts__t_sector_hit|warps_active|occupancy|local|gmma|hmma|pipe_" /tmp/all_metrics.txt > "$OUT/metric_names.txt"
wc -l /tmp/all_metrics.txt >> "$OUT/version.txt"
tail -5 "$OUT/probe_stdout.txt" >> "$OUT/version.txt"
head -c 600 "$OUT/raw.csv" >> "$OUT/version.txt"
