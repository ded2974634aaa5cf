"""Nsight Compute's counters, read into the profile's figures (grader.pipeline.profile.FIGURES).

grader.processes.profiler runs the compiled kernel under ``ncu`` with ``NCU_ARGS``; its raw page, as CSV
in base units, comes back here. The metric names are those Nsight Compute 2025.3 uses on Hopper
(scripts/profile/ncu_probe.sh lists them on the H200); where a name is missing the figure is left out,
never guessed.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

# The sections whose metrics the figures are read from. SpeedOfLight: DRAM and SM throughput; LaunchStats and
# Occupancy: the launch and what limits occupancy; ComputeWorkloadAnalysis: pipe utilisation;
# MemoryWorkloadAnalysis(_Tables): L2 hit rate, bank conflicts, sectors; WarpStateStats: stall reasons;
# SourceCounters: bytes used per sector fetched (coalescing).
SECTIONS = (
    "SpeedOfLight",
    "LaunchStats",
    "Occupancy",
    "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis",
    "MemoryWorkloadAnalysis_Tables",
    "WarpStateStats",
    "SourceCounters",
)

# Only the kernels launched between cudaProfilerStart and Stop (the profiler runs the kernel once there);
# clocks left as they are (the device's METHOD.md: locking them changes what the kernel does).
NCU_ARGS = (
    "--profile-from-start",
    "off",
    "--clock-control",
    "none",
    *(arg for section in SECTIONS for arg in ("--section", section)),
    "--csv",
    "--page",
    "raw",
    "--print-units",
    "base",
)

SECTOR_BYTES = 32
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")
NOT_STALLS = {"selected"}  # a warp issuing an instruction: the one state that is no stall

# What each stall reason means, in the words a learner acts on.
STALL_WORDS = {
    "long_scoreboard": "waiting for global (or local) memory loads",
    "barrier": "waiting at a barrier for the block's other warps",
    "gmma": "waiting for warpgroup MMAs (wgmma) to finish",
    "mio_throttle": "on a full shared-memory instruction queue",
    "short_scoreboard": "waiting for shared-memory loads or special math (exp, division)",
    "math_pipe_throttle": "on a saturated math pipe",
    "wait": "on fixed-latency dependencies between instructions",
    "lg_throttle": "on a full global/local memory instruction queue",
    "not_selected": "ready while another warp issued",
    "no_instruction": "waiting for instructions (instruction cache)",
    "branch_resolving": "waiting for branches to resolve",
    "dispatch_stall": "on dispatch stalls",
    "membar": "waiting at a memory fence",
    "sleeping": "sleeping (nanosleep or a barrier wait)",
    "tex_throttle": "on a full texture/TMA queue",
    "drain": "draining memory stores at exit",
    "imc_miss": "on constant cache misses",
    "misc": "for other reasons",
}


def number(text: str) -> float | None:
    """A raw-page value ("181,728", "90.37", "n/a") as a float, or None."""
    cleaned = text.replace(",", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        return None


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """The rows of ``ncu --csv --page raw``: one dict per profiled kernel launch, metric name to text. The
    log's other lines (==PROF==, warnings) and the units row are skipped."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows or rows[0][:1] != ["ID"]:
        return []
    head, body = rows[0], rows[1:]
    if body and body[0][:1] == [""]:  # the units row
        body = body[1:]
    return [dict(zip(head, row)) for row in body if len(row) == len(head)]


def _get(row: dict[str, str], *names: str) -> float | None:
    for name in names:
        if name in row and (value := number(row[name])) is not None:
            return value
    return None


def figures(row: dict[str, str]) -> dict[str, Any]:
    """The GPU figures of one profiled launch (the keys of FIGURES whose source is "gpu", and the launch's own
    shape: registers, grid, threads, waves, sm_count, theoretical occupancy and its limiter)."""
    out: dict[str, Any] = {}

    def put(key: str, value: float | None, scale: float = 1.0) -> None:
        if value is not None:
            out[key] = round(value * scale, 2)

    put("duration_us", _get(row, "gpu__time_duration.sum"), 1e-3)
    put(
        "dram_pct",
        _get(
            row,
            "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        ),
    )
    read, write = _get(row, "dram__bytes_read.sum"), _get(row, "dram__bytes_write.sum")
    if read is not None and write is not None:
        out["dram_bytes"] = int(read + write)
    put("sm_pct", _get(row, "sm__throughput.avg.pct_of_peak_sustained_elapsed"))
    put(
        "tensor_pct",
        _get(
            row,
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
        ),
    )
    put("fma_pct", _get(row, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed"))
    put("achieved_occupancy_pct", _get(row, "sm__warps_active.avg.pct_of_peak_sustained_active"))
    put("theoretical_occupancy_pct", _get(row, "sm__maximum_warps_per_active_cycle_pct"))
    put("l2_hit_pct", _get(row, "lts__t_sector_hit_rate.pct"))
    sectors = _get(row, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    used = _get(row, "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio")
    if sectors and used:  # no plain global loads (TMA, cp.async only: the ratio reads 0): no figure
        put("sector_use_pct", used / SECTOR_BYTES * 100)
    conflicts = _get(row, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")
    wavefronts = _get(row, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
    if conflicts is not None and wavefronts:
        put("bank_conflict_pct", 100 * conflicts / wavefronts)
        out["bank_conflicts"] = int(conflicts)
    local = [_get(row, f"l1tex__t_sectors_pipe_lsu_mem_local_op_{op}.sum") for op in ("ld", "st")]
    if all(v is not None for v in local):
        out["local_bytes"] = int(sum(local) * SECTOR_BYTES)  # type: ignore[arg-type]
    stalls = {m.group(1): number(v) for k, v in row.items() if (m := STALL.match(k))}
    stalls = {k: v for k, v in stalls.items() if v and k not in NOT_STALLS}
    total = sum(stalls.values())
    if total:
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
        out["stalls"] = [[reason, round(100 * value / total, 1)] for reason, value in top]
    for key, name in (
        ("registers", "launch__registers_per_thread"),
        ("grid", "launch__grid_size"),
        ("threads", "launch__block_size"),
        ("sm_count", "device__attribute_multiprocessor_count"),
    ):
        if (value := _get(row, name)) is not None:
            out[key] = int(value)
    put("waves", _get(row, "launch__waves_per_multiprocessor"))
    limits = {
        label: _get(row, f"launch__occupancy_limit_{name}")
        for label, name in (
            ("registers", "registers"),
            ("shared memory", "shared_mem"),
            ("threads", "warps"),
            ("blocks per SM", "blocks"),
        )
    }
    known = {label: value for label, value in limits.items() if value is not None}
    if known:
        fewest = min(known.values())
        out["occupancy_limit"] = " and ".join(label for label, value in known.items() if value == fewest)
        out["blocks_per_sm"] = int(fewest)
    return out


def combined(rows: list[dict[str, str]]) -> dict[str, Any]:
    """One kernel's figures from its launches in the profiled call: a kernel that launches twice (a workspace
    cleared, then filled) is described by its longest launch, and its time is the sum."""
    each = [figures(row) for row in rows]
    each = [f for f in each if f]
    if not each:
        return {}
    main = dict(max(each, key=lambda f: f.get("duration_us", 0.0)))
    if len(each) > 1:
        main["duration_us"] = round(sum(f.get("duration_us", 0.0) for f in each), 2)
        main["launches"] = len(each)
    return main


# What ncu prints when it cannot read the counters, and what to do about it.
PERMISSION = "ERR_NVGPUCTRPERM"
HOW_TO_ENABLE = (
    "the GPU's performance counters are restricted to administrators on this machine. Run the grader as root "
    "(sudo), or allow them for all users: put `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file "
    "under /etc/modprobe.d/ and reboot (NVIDIA's ERR_NVGPUCTRPERM page); in a container, start it with "
    "--cap-add=SYS_ADMIN. Meanwhile --static gives the estimate without counters"
)
NO_NCU = (
    "Nsight Compute (ncu) is not on this machine's PATH: it comes with the CUDA toolkit (or `apt install "
    "nsight-compute`); put its folder on PATH, e.g. export PATH=/usr/local/cuda/bin:$PATH. Meanwhile --static "
    "gives the estimate without counters"
)


def problem_in(log: str) -> str:
    """Why ncu's log holds no counters, as one sentence with what to do; "" if nothing says so."""
    if PERMISSION in log:
        return HOW_TO_ENABLE
    if "LibraryNotLoaded" in log or "Failed to initialize the profiler" in log:
        return (
            "Nsight Compute could not start its profiler on this machine (some virtual machines and containers "
            "do not expose the GPU's counters); --static gives the estimate without them"
        )
    errors = [line.strip() for line in log.splitlines() if line.startswith("==ERROR==")]
    return f"Nsight Compute failed: {errors[0].removeprefix('==ERROR==').strip()}" if errors else ""
