"""Puzzle 08's layout experiment: shared-memory bank conflicts, and the swizzle TileLang applies.

``matmul_shared_layout`` is puzzle 08's ``matmul_shared`` with one optional line,
``T.annotate_layout({...})`` on its A and B tiles (``LAYOUT``: "default" leaves TileLang's choice,
"mma_swizzle" annotates ``make_mma_swizzle_layout(tile)`` from ``tilelang.cuda.intrinsics`` (its
path in TileLang 0.1.15), "row_major" annotates the same function's unswizzled layout, ``is_smooth=True``).

``bank_rows`` computes, from TileLang's own Layout objects, which banks the eight 16-byte rows of one
``ldmatrix`` read touch in each layout; ``compile_layouts`` lowers the kernel for an arch and returns
the lines of generated source that write and read the A tile (or the sentence TileLang refuses it
with); ``time_layouts`` times the three on a CUDA GPU.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Any

import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics import make_mma_swizzle_layout

LAYOUTS = ("default", "mma_swizzle", "row_major")
BANKS, BANK_BYTES, CHUNK_BYTES = 32, 4, 16  # an ldmatrix row is 16 bytes: 4 of the 32 4-byte banks


@tilelang.jit
def matmul_shared_layout(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, LAYOUT: str = "default", THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if LAYOUT == "mma_swizzle":
            T.annotate_layout({A_tile: make_mma_swizzle_layout(A_tile), B_tile: make_mma_swizzle_layout(B_tile)})
        elif LAYOUT == "row_major":
            T.annotate_layout(
                {
                    A_tile: make_mma_swizzle_layout(A_tile, is_smooth=True),
                    B_tile: make_mma_swizzle_layout(B_tile, is_smooth=True),
                }
            )
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C


# ------------------------------------------------------------------------------ bank maps


def _tile_layouts(rows: int, cols: int) -> dict[str, Any]:
    """The A tile's layouts as TileLang builds them: plain, TileLang's swizzle, the mma swizzle."""
    from tilelang import tvm
    from tilelang.layout import make_swizzled_layout

    tile = tvm.tirx.decl_buffer((rows, cols), "float16", name="A_tile", scope="shared.dyn")
    return {
        "row_major": make_mma_swizzle_layout(tile, is_smooth=True),
        "default": make_swizzled_layout(tile),  # the layout TileLang's gemm lowering infers for this tile
        "mma_swizzle": make_mma_swizzle_layout(tile),
    }


def element_offset(layout: Any, row: int, col: int) -> int:
    """Where element (row, col) of a tile lands in shared memory, in elements, under ``layout``."""
    from tilelang import tvm

    analyzer = tvm.arith.Analyzer()
    index = [tvm.tirx.IntImm("int32", row), tvm.tirx.IntImm("int32", col)]
    out = [int(analyzer.simplify(x)) for x in layout.map_forward_index(index)]
    shape = [int(x) for x in layout.get_output_shape()]
    offset = 0
    for value, extent in zip(out, shape):
        offset = offset * extent + value
    return offset


@dataclass(frozen=True)
class BankRow:
    """One layout's answer to: which 4-bank group does each of one ldmatrix's 8 rows read?"""

    layout: str
    groups: tuple[int, ...]  # per tile row 0..7: the group of banks 4g..4g+3 its 16 bytes sit in

    @property
    def passes(self) -> int:
        """Shared-memory passes the read needs: the most rows that fall in one group (1 = no conflict)."""
        return max(self.groups.count(g) for g in set(self.groups))


def bank_rows(block_m: int = 64, block_k: int = 32, chunk: int = 0) -> list[BankRow]:
    """For an fp16 A tile of block_m x block_k: the banks one ldmatrix 8x8 read of rows 0..7, 16-byte
    column chunk ``chunk``, touches under each layout."""
    out = []
    for name, layout in _tile_layouts(block_m, block_k).items():
        groups = []
        for row in range(8):
            byte = 2 * element_offset(layout, row, chunk * CHUNK_BYTES // 2)
            groups.append((byte // BANK_BYTES) % BANKS // (CHUNK_BYTES // BANK_BYTES))
        out.append(BankRow(name, tuple(groups)))
    return out


def bank_table(rows: list[BankRow]) -> str:
    head = "layout        " + " ".join(f"row {r}" for r in range(8)) + "   passes"
    lines = [head]
    for r in rows:
        cells = " ".join(f"{4 * g:>2}-{4 * g + 3:<2}" for g in r.groups)
        lines.append(f"{r.layout:<13} {cells}   {r.passes}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ what the lowering emits

SIZES = {"M": 256, "N": 256, "K": 256, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}


@dataclass(frozen=True)
class Lowered:
    arch: str
    layout: str
    refused: str  # TileLang's sentence when it rejects the annotation, else ""
    lines: tuple[str, ...]  # the source lines that store into and read from A_tile


@contextlib.contextmanager
def _no_fd2():
    """TVM logs a refused layout straight to file descriptor 2 before it raises; the error says it too."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def lower_layout(layout: str, arch: str = "sm_80", **values: Any) -> Lowered:
    from tilelang import tvm

    tir = matmul_shared_layout.get_tir(**{**SIZES, **values}, LAYOUT=layout)
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    try:
        with _no_fd2(), target, tvm.transform.PassContext(opt_level=3):
            source = tilelang.lower(tir, target=target).kernel_source
    except Exception as error:  # TileLang's layout inference refusing the annotation
        first = next((line.strip() for line in str(error).splitlines() if "layout" in line.lower()), str(error))
        return Lowered(arch, layout, first[:200], ())
    wanted = ("half_t*)A_tile) +", "ldmatrix", "initialize_wgmma_descriptor")
    lines = tuple(line.strip() for line in source.splitlines() if any(w in line for w in wanted))
    return Lowered(arch, layout, "", lines)


def compile_layouts(archs: tuple[str, ...] = ("sm_80", "sm_90a")) -> list[Lowered]:
    return [lower_layout(layout, arch) for arch in archs for layout in LAYOUTS]


# ------------------------------------------------------------------------------ timing (GPU)


def time_layouts(size: int = 4096, arch: str = "sm_80") -> dict[str, float] | None:
    """Median ms of each layout at size³ on this GPU, lowered for ``arch`` (the mma.sync path; nvcc
    builds this GPU's code from its PTX). None without a CUDA GPU."""
    import torch

    if not torch.cuda.is_available():
        return None
    from tilelang import tvm

    from grader.pipeline.timing import median_ms

    major, minor = torch.cuda.get_device_capability()
    target = tvm.target.Target({"kind": "cuda", "arch": arch, "code": [f"sm_{major}{minor}"]})
    sizes = {"M": size, "N": size, "K": size}
    # A and B only: the compiled kernel allocates and returns C (its T.empty output)
    inputs = [[torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2)] for _ in range(3)]
    times = {}
    for layout in LAYOUTS:
        tir = matmul_shared_layout.get_tir(**{**SIZES, **sizes}, LAYOUT=layout)
        compiled = tilelang.compile(tir, target=target)
        times[layout] = median_ms(lambda args, kernel=compiled: kernel(*args), inputs)
    return times
