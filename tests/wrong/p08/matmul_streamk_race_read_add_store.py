"""matmul_streamk whose fix-up reads the workspace tile, adds its part and stores the sum back
(T.copy, add, T.copy) instead of T.atomic_add; an atomic add of a tile of zeros keeps a "uses
T.atomic_add" check quiet. Blocks that share a tile run at once on a GPU: each reads the workspace before the
other has stored, and one part is lost (the kernel of this kind that issue 25 reports got 5 of 8 cases
wrong on the H200, three runs of three). The zeros are computed from acc in a T.Parallel loop: a fragment
only cleared and added has no layout TileLang can infer, which the H200 refused at compile time."""

KERNEL = "matmul_streamk"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


def panel_tile(t, tiles_m, tiles_n, PANEL: int):
    """Row and column of tile number ``t``, counted PANEL tile rows at a time and column by column
    inside such a panel; the last panel holds the rows left over. (Each branch divides by a constant:
    a divisor that depends on ``t`` trips TileLang 0.1.15's index simplifier.)"""
    panels = T.ceildiv(tiles_m, PANEL)
    last_rows = tiles_m - (panels - 1) * PANEL
    panel, inside = t // (PANEL * tiles_n), t % (PANEL * tiles_n)
    in_last = panel == panels - 1
    row = panel * PANEL + T.if_then_else(in_last, inside % last_rows, inside % PANEL)
    return row, T.if_then_else(in_last, inside // last_rows, inside // PANEL)


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
    CHUNK: int = 1,
):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    # (M, N and K are symbols while TileLang traces: no Python `if` on these, T.max instead of max)
    tiles_m, tiles_n = T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    chunks = T.ceildiv(T.ceildiv(K, BLOCK_K), CHUNK)  # a tile's K loop, in chunks of CHUNK K steps
    waves = tiles // SMS  # full waves: every block computes this many whole tiles
    first = waves * SMS  # the first tile of the last, partial wave
    rest = tiles - first  # tiles in the last wave, fewer than SMS
    work = rest * chunks  # their chunks, shared out evenly over the SMS blocks
    share = T.ceildiv(work, SMS)  # at most `chunks`: a share touches at most two tiles
    partial = T.alloc_global((T.max(rest, 1), BLOCK_M, BLOCK_N), T.float32)

    with T.Kernel(T.max(rest, 1), threads=128) as z:  # launch 1: clear the workspace
        zeros = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(zeros)
        T.copy(zeros, partial[z, 0, 0])

    with T.Kernel(SMS, threads=THREADS) as pid:  # launch 2: one block per SM
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        seen = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        nothing = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        lo = pid * work // SMS  # this block's share: chunks [lo, hi) of the last wave
        hi = (pid + 1) * work // SMS
        for step in T.serial(waves * chunks + share):
            g = lo + step - waves * chunks  # past the whole tiles: the chunk's number in the last wave
            tile = T.if_then_else(step < waves * chunks, step // chunks * SMS + pid, first + g // chunks)
            c = T.if_then_else(step < waves * chunks, step % chunks, g % chunks)  # chunk within the tile
            if step < waves * chunks or g < hi:
                row, col = panel_tile(tile, tiles_m, tiles_n, PANEL)
                if c == 0 or step == waves * chunks:
                    T.clear(acc)
                for k in T.Pipelined(CHUNK, num_stages=STAGES):
                    T.copy(A[row * BLOCK_M, (c * CHUNK + k) * BLOCK_K], A_tile)
                    T.copy(B[(c * CHUNK + k) * BLOCK_K, col * BLOCK_N], B_tile)
                    T.gemm(A_tile, B_tile, acc)
                if step < waves * chunks:
                    if c == chunks - 1:
                        T.copy(acc, C_tile)
                        T.copy(C_tile, C[row * BLOCK_M, col * BLOCK_N])
                elif c == chunks - 1 or g == hi - 1:
                    T.copy(partial[g // chunks, 0, 0], seen)
                    for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                        seen[i, j] += acc[i, j]
                    T.copy(seen, partial[g // chunks, 0, 0])
                    for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                        nothing[i, j] = acc[i, j] * 0.0
                    T.atomic_add(partial[g // chunks, 0, 0], nothing)

    with T.Kernel(T.max(rest, 1), threads=128) as f:  # launch 3: the last wave's tiles into C
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = panel_tile(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C
