"""What to try, read from a profile's figures: one or two sentences, each carrying the figures it rests on.

Each rule looks at the figures of the learner's kernel (and the reference's, to compare) and, when its evidence
is there, gives a severity and a sentence; the most severe come first. A rule whose figures are missing (no
GPU counters, say) says nothing. The thresholds are where the cause starts to dominate a kernel's time, not
exact limits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grader.pipeline.profile.counters import STALL_WORDS

Figures = dict[str, Any]
Rule = Callable[[Figures, Figures], "tuple[float, str] | None"]

MOST = 2  # sentences


def _bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def too_few_blocks(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    grid, sms = yours.get("grid"), yours.get("sm_count")
    if not grid or not sms or grid >= sms / 2:
        return None
    theirs = reference.get("grid")
    if theirs and theirs <= grid:
        compared = " The course's kernel launches as few here: this kernel is the lesson's starting point."
    elif theirs:
        compared = f" The course's kernel launches {theirs:,} blocks."
    else:
        compared = ""
    return (
        1.0 - grid / sms,
        f"Too little parallelism: {grid} block{'s' if grid > 1 else ''} for {sms} SMs, so {sms - grid} SMs have "
        "nothing to do. Give each block less work (smaller tiles, or split the loop a block runs over several "
        f"blocks) so that the grid covers every SM.{compared}",
    )


def spills(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    spilled, local, registers = yours.get("spill_bytes") or 0, yours.get("local_bytes") or 0, yours.get("registers")
    if not spilled and not local:
        return None
    traffic = f", {_bytes(local)} of local-memory traffic" if local else ""
    per_thread = f"ptxas spilled {spilled} bytes per thread to local memory" if spilled else "threads use local memory"
    return (
        0.9,
        f"Registers ran out: {per_thread} ({registers} registers per thread{traffic}). Make each thread hold less: "
        "a smaller fragment per block, or more threads sharing the same tile.",
    )


def uncoalesced(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    used = yours.get("sector_use_pct")
    if used is None or used >= 50:
        return None
    return (
        0.85 * (1 - used / 100),
        f"Uncoalesced reads: of each 32-byte sector a load fetches, only {used:.0f}% is used, because "
        "neighbouring threads read addresses far apart. Let consecutive threads (the last index of a T.Parallel "
        "loop) walk the tensor's contiguous last dimension, or load whole tiles with T.copy.",
    )


def bank_conflicts(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    lost = yours.get("bank_conflict_pct")
    if lost is None or lost < 20:
        return None
    return (
        0.8 * lost / 100,
        f"Shared-memory bank conflicts: {lost:.0f}% of shared-memory wavefronts are replays, where threads of a "
        "warp hit one bank at different addresses. Pad the tile's rows or use a swizzled layout (TileLang picks "
        "one when T.copy and T.gemm see the whole tile).",
    )


def static_bank_conflicts(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    """Without the counters: the generated code's worst shared-memory access, read from its index (static.py)."""
    said = yours.get("bank_ways")
    if yours.get("bank_conflict_pct") is not None or not isinstance(said, str) or "-way, " not in said:
        return None
    ways, access = said.split("-way, ", 1)
    if int(ways) < 4:
        return None
    tile, kind = access.rsplit(" ", 1)
    return (
        0.5,
        f"Shared-memory bank conflicts, estimated from the generated code: each {kind} of {tile} by a warp hits "
        f"one bank at {ways} different addresses, so it is served {ways} times over. Pad {tile}'s rows by one "
        "4-byte word, or, where a TMA copy or T.gemm needs the tile whole, swizzle its layout (T.annotate_layout "
        f"with make_swizzled_layout), so that the rows one {kind} touches fall in different banks.",
    )


def memory_bound(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    dram = yours.get("dram_pct")
    if dram is None or dram < 70:
        return None
    moved, needed = yours.get("dram_bytes"), yours.get("compulsory_bytes")
    if moved and needed and moved > 1.5 * needed:
        return (
            0.7,
            f"Memory-bound on extra bytes: DRAM is {dram:.0f}% busy, moving {_bytes(moved)} where the problem needs "
            f"{_bytes(needed)} ({moved / needed:.1f}x). Read each element once: keep tiles that are reused in shared "
            "memory or registers.",
        )
    return (
        0.3,
        f"At the memory limit: DRAM is {dram:.0f}% busy. Only moving fewer bytes can make it faster now.",
    )


def no_tensor_cores(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    if yours.get("bound") != "compute" or yours.get("tensor_cores") not in ("none", None):
        return None
    if yours.get("tensor_cores") is None and not yours.get("fma_pct"):
        return None
    fma = f" (FMA pipe {yours['fma_pct']:.0f}% busy)" if yours.get("fma_pct") is not None else ""
    return (
        0.75,
        f"The math runs on CUDA cores{fma}, though the problem is compute-bound: T.gemm on shared-memory or "
        "fragment tiles runs it on Tensor Cores, many times faster.",
    )


def compute_bound(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    tensor = yours.get("tensor_pct")
    if tensor is None or tensor < 60:
        return None
    waves = yours.get("waves")
    tail = f"; {waves:g} waves of blocks, so the last one leaves SMs idle" if waves and waves % 1 and waves < 8 else ""
    return (
        0.25,
        f"At the compute limit: the Tensor Cores are busy {tensor:.0f}% of the time. What is left is the schedule: "
        f"tile shape, pipeline depth, the order blocks run in{tail}.",
    )


def latency_bound(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    stalls, dram, tensor = yours.get("stalls") or [], yours.get("dram_pct"), yours.get("tensor_pct") or 0
    if not stalls or dram is None or dram >= 60 or tensor >= 60:
        return None
    reason, share = stalls[0]
    words = STALL_WORDS.get(reason, reason.replace("_", " "))
    occupancy, limit = yours.get("achieved_occupancy_pct"), yours.get("occupancy_limit")
    held = f" (achieved occupancy {occupancy:.0f}%, limited by {limit})" if occupancy is not None and limit else ""
    if reason in ("not_selected", "math_pipe_throttle", "dispatch_stall"):
        busy = f" (SM throughput {yours['sm_pct']:.0f}%)" if yours.get("sm_pct") is not None else ""
        return 0.5, (
            f"Instruction-bound: the SMs issue about as fast as they can{busy}, and warps spend {share:.0f}% of their "
            f"stalls {words}. Do less work per result: fewer index computations, reuse each loaded value more."
        )
    if yours.get("bound") == "compute":
        head = f"The Tensor Cores are busy only {tensor:.0f}% of the time: warps spend {share:.0f}% of their stalls"
        head += f" {words}"
        if reason == "long_scoreboard":
            advice = (
                "the MMAs wait for their operands. Load tiles further ahead (more T.Pipelined stages) or give each "
            )
            advice += f"block more math per byte loaded (larger tiles){held}."
        elif reason in ("barrier", "sleeping"):
            advice = "the block's warps wait for each other between steps: fewer, larger steps per barrier."
        elif reason in ("mio_throttle", "short_scoreboard"):
            advice = (
                "the operands come through shared memory too slowly. Fewer shared-memory round trips per MMA: keep "
                "reused values in registers, or let T.gemm read whole tiles."
            )
        else:
            advice = "shorten that wait before changing the math."
        return 0.5, f"{head}; {advice}"
    if reason == "long_scoreboard":
        advice = (
            f"too few loads are in flight to keep DRAM busy ({dram:.0f}%). Keep more warps resident{held}, load "
            "wider vectors, or stage tiles ahead with T.Pipelined."
        )
    elif reason in ("barrier", "sleeping"):
        advice = "the block's warps wait for each other: do more work between barriers, or use fewer, larger steps."
    elif reason in ("mio_throttle", "short_scoreboard"):
        advice = "shared memory or special math is the bottleneck: fewer shared-memory round trips per result."
    else:
        advice = f"DRAM is only {dram:.0f}% busy{held}."
    return 0.5, f"Latency-bound: warps spend {share:.0f}% of their stalls {words}; {advice}"


def register_occupancy(yours: Figures, reference: Figures) -> tuple[float, str] | None:
    occupancy, limit = yours.get("occupancy_pct"), yours.get("occupancy_limit")
    if occupancy is None or occupancy >= 25 or not limit or yours.get("tensor_pct") is not None:
        return None  # with counters, latency_bound says whether low occupancy matters
    if yours.get("copies") in ("TMA", "cp.async"):
        return None  # a pipelined kernel keeps its own loads in flight: few resident warps are its design
    return (
        0.4,
        f"Low occupancy: {occupancy:.0f}% of an SM's warps can be resident, limited by {limit}. That leaves few "
        "warps to hide memory latency unless the kernel keeps loads in flight itself (T.Pipelined).",
    )


RULES: tuple[Rule, ...] = (
    too_few_blocks,
    spills,
    uncoalesced,
    bank_conflicts,
    static_bank_conflicts,
    no_tensor_cores,
    memory_bound,
    latency_bound,
    register_occupancy,
    compute_bound,
)


def advise(yours: Figures, reference: Figures) -> list[str]:
    """The most severe one or two sentences of what to try, most severe first; where no rule finds its evidence,
    one sentence that says so with the figures that were looked at."""
    found = [said for rule in RULES if (said := rule(yours, reference))]
    found.sort(key=lambda pair: -pair[0])
    return [sentence for _, sentence in found[:MOST]] or [nothing_stands_out(yours)]


def nothing_stands_out(yours: Figures) -> str:
    if yours.get("dram_pct") is not None:
        stalls = yours.get("stalls") or []
        top = f", warps stall most {STALL_WORDS.get(stalls[0][0], stalls[0][0])}" if stalls else ""
        tensor = yours.get("tensor_pct") or 0
        return (
            f"No single cause stands out: DRAM {yours['dram_pct']:.0f}% busy, Tensor Cores {tensor:.0f}%{top}. "
            "Try one change at a time (tile shape, stages, threads) and profile again."
        )
    floor, bound = yours.get("floor_us"), yours.get("bound")
    at_least = f" it is {bound}-bound, at least {floor:,.1f} us on this GPU generation" if floor and bound else ""
    return (
        f"No cause stands out in the estimate:{at_least or ' nothing in it is out of line'}. On a GPU, --bench says "
        "how close it comes and --profile reads the counters."
    )


def comparison(yours: Figures, reference: Figures) -> str:
    """One line: the two times under the profiler, when both were measured."""
    mine, theirs = yours.get("duration_us"), reference.get("duration_us")
    if not mine or not theirs:
        return ""
    return (
        f"Under the profiler yours took {mine:,.1f} us and the course's kernel {theirs:,.1f} us ({mine / theirs:.2f}x)."
    )
