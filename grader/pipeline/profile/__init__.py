"""Profile: why a kernel takes its time, in figures a learner can act on (``--profile KERNEL``).

Two sources, one set of names:
- ``static``: an estimate from the admitted TIR and ptxas, on any machine with nvcc: the bytes and flops
  each block asks for, registers, spills and shared memory, the occupancy they allow, and what TileLang
  lowered the tile operations to;
- ``counters``: Nsight Compute's hardware counters on a GPU, read by grader.processes.profiler, which runs
  the compiled kernel under ``ncu`` (never the learner's Python).

``advice`` turns both into the sentences of what to try. A profile is never part of a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    key: str  # the field's name in a ProfileReport's ``yours`` / ``reference``
    label: str  # what a learner reads
    unit: str  # "%", "B", "us", "" ...
    source: str  # "static" or "gpu"


FIGURES: tuple[Figure, ...] = (
    # --- static: the TIR, ptxas and the device profile
    Figure("grid", "blocks launched", "", "static"),
    Figure("threads", "threads per block", "", "static"),
    Figure("bytes_per_block", "global bytes one block asks for", "B", "static"),
    Figure("flops_per_block", "flops one block does", "", "static"),
    Figure("bytes_total", "global bytes all blocks ask for", "B", "static"),
    Figure("flops_total", "flops in all", "", "static"),
    Figure("compulsory_bytes", "bytes the problem must move", "B", "static"),
    Figure("floor_us", "roofline lower bound", "us", "static"),
    Figure("bound", "what sets that bound", "", "static"),
    Figure("registers", "registers per thread", "", "static"),
    Figure("spill_bytes", "bytes spilled per thread", "B", "static"),
    Figure("shared_bytes", "shared memory per block", "B", "static"),
    Figure("blocks_per_sm", "blocks that fit on one SM", "", "static"),
    Figure("occupancy_pct", "occupancy those allow", "%", "static"),
    Figure("occupancy_limit", "what limits it", "", "static"),
    Figure("waves", "waves of blocks over the SMs", "", "static"),
    Figure("tensor_cores", "Tensor Core instructions", "", "static"),
    Figure("copies", "global-to-shared copies", "", "static"),
    Figure("vector_bytes", "widest global load or store", "B", "static"),
    Figure("bank_ways", "worst shared-memory bank conflict", "", "static"),
    # --- gpu: Nsight Compute
    Figure("duration_us", "time under the profiler", "us", "gpu"),
    Figure("dram_pct", "DRAM throughput, % of peak", "%", "gpu"),
    Figure("dram_bytes", "bytes read and written in DRAM", "B", "gpu"),
    Figure("sm_pct", "SM throughput, % of peak", "%", "gpu"),
    Figure("tensor_pct", "Tensor Core pipe busy", "%", "gpu"),
    Figure("fma_pct", "FMA pipe busy", "%", "gpu"),
    Figure("theoretical_occupancy_pct", "occupancy the launch allows", "%", "gpu"),
    Figure("achieved_occupancy_pct", "achieved occupancy", "%", "gpu"),
    Figure("l2_hit_pct", "L2 hit rate", "%", "gpu"),
    Figure("sector_use_pct", "bytes used per 32-byte sector loaded", "%", "gpu"),
    Figure("bank_conflict_pct", "shared-memory wavefronts lost to bank conflicts", "%", "gpu"),
    Figure("local_bytes", "local-memory (spill) traffic", "B", "gpu"),
    Figure("stalls", "top warp stall reasons", "", "gpu"),
    Figure("launches", "kernel launches per call", "", "gpu"),
)

FIGURE = {figure.key: figure for figure in FIGURES}
