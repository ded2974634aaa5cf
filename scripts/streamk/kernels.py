"""Candidates for the p08 rung after ``matmul_tuned``: schedule the last wave (issue 15).

At 4096^3 with 128 x 256 tiles there are 512 tiles for the H200's 132 SMs: three full waves and a
fourth with 116 tiles, so 16 SMs idle through the last quarter of the run. Two kernels here:

``matmul_persistent``
    One block per SM (``SMS`` blocks) walks the tiles ``pid, pid + SMS, ...``: a data-parallel
    persistent GEMM. The waves are the same as ``matmul_tuned``'s, but a block's producer warpgroup
    starts loading its next tile while the consumers store the last one.

``matmul_streamk``
    The same persistent walk over the full waves (``tiles // SMS`` tiles per block), then the tiles of
    the partial last wave are shared out by K iterations: the ``rest * k_tiles`` iterations left are
    split into ``SMS`` equal ranges, one per block. A range covers the end of one tile and the start of
    the next, so a tile's sum is split over two or more blocks; each adds its fp32 partial into a
    workspace with ``T.atomic_add``. Three launches in one kernel function: clear the workspace, the
    GEMM, then round the workspace's tiles to fp16 into C.

Both keep matmul_tuned's panels (tiles walked PANEL tile-rows at a time, column by column) and its
staged store. The module is shaped like a puzzle file (``puzzle()``), so scripts/streamk/sweep.py
and the grader's own machinery (trace, admit, compile, simulate) take it as they take p08.
"""

from __future__ import annotations

import tilelang
import tilelang.language as T

from grader.spec import Case, Kernel, Puzzle, Tensor


def matmul_reference(A, B):
    return A @ B


def torch_matmul(A, B):
    return A @ B


def _tile_of(t, tiles_m: int, tiles_n: int, PANEL: int):
    """Row and column of tile ``t`` in panel order: PANEL tile-rows at a time, walked column by column;
    the last panel holds the rows left over. (Each branch divides by a constant: a divisor that depends
    on ``t`` trips TileLang's index simplifier.)"""
    panels = T.ceildiv(tiles_m, PANEL)
    last_rows = tiles_m - (panels - 1) * PANEL
    panel = t // (PANEL * tiles_n)
    inside = t % (PANEL * tiles_n)
    in_last = panel == panels - 1
    row = panel * PANEL + T.if_then_else(in_last, inside % last_rows, inside % PANEL)
    return row, T.if_then_else(in_last, inside // last_rows, inside // PANEL)


@tilelang.jit
def matmul_persistent(
    A,
    B,
    BLOCK_M: int,
    BLOCK_N: int,
    BLOCK_K: int,
    STAGES: int = 3,
    THREADS: int = 256,
    SMS: int = 132,
    PANEL: int = 8,
    STAGED: int = 1,
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    tiles_m, tiles_n = T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n

    with T.Kernel(SMS, threads=THREADS) as pid:
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16) if STAGED else None
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        for w in T.serial(T.ceildiv(tiles, SMS)):
            t = w * SMS + pid
            if t < tiles:
                row, col = _tile_of(t, tiles_m, tiles_n, PANEL)
                T.clear(acc)
                for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
                    T.copy(A[row * BLOCK_M, k * BLOCK_K], A_tile)
                    T.copy(B[k * BLOCK_K, col * BLOCK_N], B_tile)
                    T.gemm(A_tile, B_tile, acc)
                if STAGED:
                    T.copy(acc, C_tile)
                    T.copy(C_tile, C[row * BLOCK_M, col * BLOCK_N])
                else:
                    T.copy(acc, C[row * BLOCK_M, col * BLOCK_N])

    return C


@tilelang.jit
def matmul_streamk_dyn(
    A,
    B,
    BLOCK_M: int,
    BLOCK_N: int,
    BLOCK_K: int,
    STAGES: int = 3,
    THREADS: int = 256,
    SMS: int = 132,
    PANEL: int = 8,
    STAGED: int = 1,
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    tiles_m, tiles_n, k_tiles = T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), T.ceildiv(K, BLOCK_K)
    tiles = tiles_m * tiles_n
    waves = tiles // SMS  # full waves: each block computes `waves` whole tiles
    first = waves * SMS  # the tiles from here on are the partial last wave, shared by K iterations
    rest = tiles - first
    work = rest * k_tiles  # K iterations in the last wave, split evenly over the SMS blocks
    # (the sizes are symbols while TileLang traces, so no Python `if` on them: a grid of at least one)
    partial = T.alloc_global((T.max(rest, 1), BLOCK_M, BLOCK_N), T.float32)

    with T.Kernel(T.max(rest, 1), threads=128) as z:
        zeros = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(zeros)
        T.copy(zeros, partial[z, 0, 0])

    with T.Kernel(SMS, threads=THREADS) as pid:
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16) if STAGED else None
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        # This block's share of the last wave: iterations [lo, hi) of its rest * k_tiles. The share is at
        # most k_tiles long (rest < SMS), so it touches at most two tiles: two segments after the waves.
        # (One loop for both: TileLang multi-buffers the shared tiles per pipelined loop that uses them.)
        lo = pid * work // SMS
        hi = (pid + 1) * work // SMS
        for seg in T.serial(waves + 2):
            # (seg < waves is written out each time: a bound boolean that folds to a constant trips TileLang)
            r = lo // k_tiles + seg - waves  # in the last wave: which of its tiles
            tile = T.if_then_else(seg < waves, seg * SMS + pid, first + r)
            start = T.if_then_else(seg < waves, 0, T.max(lo - r * k_tiles, 0))
            stop = T.if_then_else(seg < waves, k_tiles, T.min(hi - r * k_tiles, k_tiles))
            if start < stop:
                row, col = _tile_of(tile, tiles_m, tiles_n, PANEL)
                T.clear(acc)
                for k in T.Pipelined(stop - start, num_stages=STAGES):
                    T.copy(A[row * BLOCK_M, (start + k) * BLOCK_K], A_tile)
                    T.copy(B[(start + k) * BLOCK_K, col * BLOCK_N], B_tile)
                    T.gemm(A_tile, B_tile, acc)
                if seg < waves:
                    if STAGED:
                        T.copy(acc, C_tile)
                        T.copy(C_tile, C[row * BLOCK_M, col * BLOCK_N])
                    else:
                        T.copy(acc, C[row * BLOCK_M, col * BLOCK_N])
                else:
                    T.atomic_add(partial[r, 0, 0], acc)

    with T.Kernel(T.max(rest, 1), threads=128) as f:
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = _tile_of(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C


@tilelang.jit
def matmul_streamk(
    A,
    B,
    BLOCK_M: int,
    BLOCK_N: int,
    BLOCK_K: int,
    STAGES: int = 3,
    THREADS: int = 256,
    SMS: int = 132,
    PANEL: int = 8,
    STAGED: int = 1,
    CHUNK: int = 1,
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    tiles_m, tiles_n = T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    chunks = T.ceildiv(T.ceildiv(K, BLOCK_K), CHUNK)  # a tile's K loop in chunks of CHUNK steps
    waves = tiles // SMS  # full waves: each block computes `waves` whole tiles
    first = waves * SMS  # the tiles from here on are the partial last wave, shared out by chunks
    rest = tiles - first
    work = rest * chunks  # chunks in the last wave, split evenly over the SMS blocks
    share = T.ceildiv(work, SMS)  # at most `chunks` (rest < SMS): a share touches at most two tiles
    partial = T.alloc_global((T.max(rest, 1), BLOCK_M, BLOCK_N), T.float32)

    with T.Kernel(T.max(rest, 1), threads=128) as z:
        zeros = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(zeros)
        T.copy(zeros, partial[z, 0, 0])

    with T.Kernel(SMS, threads=THREADS) as pid:
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16) if STAGED else None
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        lo = pid * work // SMS  # this block's chunks of the last wave: [lo, hi)
        hi = (pid + 1) * work // SMS
        # One loop over the block's chunks, the whole tiles first: one pipelined loop of a fixed length
        # (TileLang multi-buffers shared tiles per pipelined loop, and a loop of varying length does not
        # compile where there is no TMA).
        for step in T.serial(waves * chunks + share):
            g = lo + step - waves * chunks  # in the last wave: the chunk's index in [0, work)
            tile = T.if_then_else(step < waves * chunks, step // chunks * SMS + pid, first + g // chunks)
            c = T.if_then_else(step < waves * chunks, step % chunks, g % chunks)
            if step < waves * chunks or g < hi:
                row, col = _tile_of(tile, tiles_m, tiles_n, PANEL)
                if c == 0 or step == waves * chunks:
                    T.clear(acc)
                for k in T.Pipelined(CHUNK, num_stages=STAGES):
                    T.copy(A[row * BLOCK_M, (c * CHUNK + k) * BLOCK_K], A_tile)
                    T.copy(B[(c * CHUNK + k) * BLOCK_K, col * BLOCK_N], B_tile)
                    T.gemm(A_tile, B_tile, acc)
                if step < waves * chunks:
                    if c == chunks - 1:
                        if STAGED:
                            T.copy(acc, C_tile)
                            T.copy(C_tile, C[row * BLOCK_M, col * BLOCK_N])
                        else:
                            T.copy(acc, C[row * BLOCK_M, col * BLOCK_N])
                elif c == chunks - 1 or g == hi - 1:
                    T.atomic_add(partial[g // chunks, 0, 0], acc)

    with T.Kernel(T.max(rest, 1), threads=128) as f:
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = _tile_of(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C


_A = Tensor("A", ("M", "K"), "float16")
_B = Tensor("B", ("K", "N"), "float16")
_C = Tensor("C", ("M", "N"), "float16")


def puzzle() -> Puzzle:
    blocks = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "STAGES": 3, "THREADS": 256, "SMS": 132, "PANEL": 8}
    small = {**blocks, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "THREADS": 128}
    cases = (
        Case("square_256", {"M": 256, "N": 256, "K": 256}, {**small, "SMS": 5}, 8501, simulate=True),
        Case("odd_127x129x131", {"M": 127, "N": 129, "K": 131}, {**small, "SMS": 4}, 8502, simulate=True),
        # fewer tiles (16) than blocks: no full wave, and some blocks get no K iteration at all
        Case("few_tiles_256", {"M": 256, "N": 256, "K": 256}, {**small, "SMS": 132}, 8507, simulate=True),
        Case("rect_200x300x100", {"M": 200, "N": 300, "K": 100}, {**small, "SMS": 7}, 8503, simulate=True),
        Case("tail_1000", {"M": 1000, "N": 1000, "K": 1000}, blocks, 8504),
        Case("large_4096", {"M": 4096, "N": 4096, "K": 4096}, blocks, 8505, bench=True),
        Case("large_8192", {"M": 8192, "N": 8192, "K": 8192}, blocks, 8506, bench=True),
    )
    common = dict(
        inputs=(_A, _B),
        outputs=(_C,),
        reference=matmul_reference,
        baseline=torch_matmul,
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"],
        tiles={"C": ("BLOCK_M", "BLOCK_N")},
        cases=cases,
    )
    return Puzzle(
        id="08",
        title="Matrix: the last wave",
        kernels=(
            Kernel(function="matmul_persistent", title="persistent GEMM", **common),
            Kernel(function="matmul_streamk", title="stream-K GEMM, chunked", **common),
            Kernel(function="matmul_streamk_dyn", title="stream-K GEMM, segments of any length", **common),
        ),
    )
