"""Where does a T.copy from a shared tile to global memory write past a tensor's end? (issue 25, item 3)

A conv1d_naive that converts its fp32 accumulator into an fp16 shared tile and stores that tile with
T.copy failed on the H200 with 3 (L = 37) and 5 (L = 4099) elements written after Y. For a range of
lengths L this script builds that store alone (a 1-D fp16 shared tile of BLOCK elements to Y[bx * BLOCK])
for sm_90a, says which instruction TileLang chose for it, and on a GPU counts the elements written past
Y's end (Y is a view at the start of a larger NaN-filled buffer), with TileLang's defaults and with TMA
lowering off.

    python scripts/p09/tma_store_tail.py            # on the H200: the table; without a GPU: the CUDA's store only
"""

from __future__ import annotations

import logging
import sys

import tilelang
import tilelang.language as T
import torch

BLOCK = 256
LENGTHS = (33, 36, 37, 38, 39, 40, 41, 44, 47, 48, 4096, 4097, 4099, 4100, 4104)


def store_tile(L: int):
    @tilelang.jit
    def kernel(X, Y):
        X: T.Tensor((L,), T.float16)
        Y: T.Tensor((L,), T.float16)
        with T.Kernel(T.ceildiv(L, BLOCK), threads=128) as bx:
            tile = T.alloc_shared((BLOCK,), T.float16)
            for i in T.Parallel(BLOCK):
                tile[i] = T.float16(1.0)  # every element of the tile, those past the end too
            T.copy(tile, Y[bx * BLOCK])

    return kernel


def instruction(source: str) -> str:
    if "tma_store" in source:
        return "TMA store (tl::tma_store)"
    if "cp_async" in source:
        return "cp.async"
    return "plain stores"


def main() -> int:
    logging.getLogger("tilelang").setLevel(logging.ERROR)
    gpu = torch.cuda.is_available()
    print(f"{'L':>6} {'bytes':>6} {'TMA on: instruction':>28} {'past the end':>12} {'TMA off: past the end':>22}")
    for L in LENGTHS:
        row = []
        for tma in (True, False):
            configs = {} if tma else {"tl.disable_tma_lower": True}
            target = "cuda" if gpu else {"kind": "cuda", "arch": "sm_90a"}
            compiled = tilelang.compile(store_tile(L).get_tir(), target=target, pass_configs=configs)
            past = "-"
            if gpu:
                room = torch.full((L + 64,), float("nan"), dtype=torch.float16, device="cuda")
                compiled(torch.zeros(L, dtype=torch.float16, device="cuda"), room[:L])
                torch.cuda.synchronize()
                past = str(int((~torch.isnan(room[L:])).sum()))
            row.append((instruction(compiled.get_kernel_source()), past))
        print(f"{L:>6} {2 * L:>6} {row[0][0]:>28} {row[0][1]:>12} {row[1][1]:>22}   (TMA off: {row[1][0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
