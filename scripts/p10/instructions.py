"""Puzzle 10's decode kernels, counted without a GPU: PTX instructions per weight in one K step.

    python scripts/p10/instructions.py [KERNEL ...]

Each kernel is compiled for sm_90a at dequant_matmul's decode bench case, read from puzzle 10's cases
(M = 16, N = K = 8192, G = 128; BLOCK 16 x 64 x 128, 4 stages, 128 threads), and its PTX counted by
kind (grader.teaching.experiments.instruction_mix). The K loop is not unrolled and the unpacking inside it is,
so the counts are one K step of one thread of the warpgroup that unpacks: 64 x 128 weights over 128
threads, 64 weights. The timings beside them are the H200's, from `python scripts/p10/sweep.py` (2026-12-01).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASE = "decode_16x8192x8192_g128"
THREADS = 128  # the kernels' default: one warpgroup unpacks
# dequant_matmul_decode is decode_wa of scripts/p10/candidates.py, as the sweep timed it
MEASURED_US = {"dequant_matmul": 52.1, "decode_ws": 42.3, "dequant_matmul_decode": 41.6, "decode_wq": 56.0}


def kernels() -> dict:
    from scripts.p10 import candidates
    from solutions.p10_dequant_matmul import dequant_matmul, dequant_matmul_decode

    return {
        "dequant_matmul": dequant_matmul,
        "decode_ws": candidates.decode_ws,
        "dequant_matmul_decode": dequant_matmul_decode,
        "decode_wq": candidates.decode_wq,
    }


def main(names: list[str]) -> int:
    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.teaching.experiments import INSTRUCTION_KINDS, instruction_mix

    puzzle = load_puzzle(load_module(puzzle_files(course_root() / "solutions")["10"]))
    case = puzzle.kernel("dequant_matmul").case(CASE)
    sizes = {name: value for name, value in case.sizes.items() if name != "KH"}  # KH = K / 2 is derived
    values = {**sizes, **case.params}
    weights_per_thread = values["BLOCK_N"] * values["BLOCK_K"] // THREADS
    chosen = kernels()
    if names:
        chosen = {name: chosen[name] for name in names}
    kinds = list(INSTRUCTION_KINDS)
    print(f"PTX instructions per weight, one K step ({weights_per_thread} weights per thread)")
    print(f"{'kernel':21} " + " ".join(f"{kind:>17}" for kind in kinds) + f" {'H200 us':>8}")
    for name, function in chosen.items():
        counts = instruction_mix(function, **values)
        cells = " ".join(f"{counts[kind] / weights_per_thread:17.2f}" for kind in kinds)
        print(f"{name:21} {cells} {MEASURED_US.get(name, float('nan')):8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
