"""matmul_streamk with another split of the last wave: every block takes work // SMS chunks and the
first work % SMS blocks one more (the solution's shares are pid * work // SMS ... (pid + 1) * work // SMS),
the K offset of a step named once, and the end of a piece tested first, then whether it is a whole tile.
"""

KERNEL = "matmul_streamk"

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
        A_s = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_s = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_s = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        whole = waves * chunks  # loop steps spent on whole tiles
        base, extra = work // SMS, work % SMS
        lo = pid * base + T.min(pid, extra)  # blocks 0 .. extra - 1 take base + 1 chunks
        hi = lo + base + T.if_then_else(pid < extra, 1, 0)
        for step in T.serial(whole + T.ceildiv(work, SMS)):
            g = lo + step - whole  # the chunk's number in the last wave, once past the whole tiles
            tile = T.if_then_else(step < whole, step // chunks * SMS + pid, first + g // chunks)
            c = T.if_then_else(step < whole, step % chunks, g % chunks)
            if step < whole or g < hi:
                row, col = panel_tile(tile, tiles_m, tiles_n, PANEL)
                if c == 0 or g == lo:
                    T.clear(acc)
                for k in T.Pipelined(CHUNK, num_stages=STAGES):
                    k0 = (c * CHUNK + k) * BLOCK_K
                    T.copy(A[row * BLOCK_M, k0], A_s)
                    T.copy(B[k0, col * BLOCK_N], B_s)
                    T.gemm(A_s, B_s, acc)
                if c == chunks - 1 or g == hi - 1:
                    if step < whole:
                        T.copy(acc, C_s)
                        T.copy(C_s, C[row * BLOCK_M, col * BLOCK_N])
                    else:
                        T.atomic_add(partial[tile - first, 0, 0], acc)

    with T.Kernel(T.max(rest, 1), threads=128) as f:  # launch 3: the last wave's tiles into C
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = panel_tile(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C
