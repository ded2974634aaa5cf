"""matmul_streamk walked segment by segment: each step of the outer loop is one tile with its own range
of chunks [begin, end) (0 .. chunks for a whole tile; the share cut to its at most two tiles), cleared
once before its chunks and stored or added into the workspace once after them.
"""

KERNEL = "matmul_streamk"
# On the H200 every case with a whole tile of several chunks fails: TileLang 0.1.15's warp specialization
# moves the T.clear(acc) before `for j` into the consumer's branch inside it, so each chunk clears the
# sum (tests/test_right.py pins that in the CUDA it generates). A check that compiles it (the CLI, a notebook)
# reads that from the CUDA and simulates what it does (grader.pipeline.miscompiles): the GPU's verdicts, case by
# case; tests/test_right.py's in-process simulation, which builds nothing, runs the TIR as written.
TILELANG_MISCOMPILES = "warp specialization moves T.clear(acc) into the chunk loop (TileLang 0.1.15, sm_90a)"

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
        lo = pid * work // SMS  # this block's share: chunks [lo, hi) of the last wave
        hi = (pid + 1) * work // SMS
        # A share is at most `chunks` long, so it covers parts of at most two tiles: after the whole
        # tiles come two more segments, the tile where the share starts and the next one.
        for seg in T.serial(waves + 2):
            r = lo // chunks + seg - waves  # past the whole tiles: the tile's number in the last wave
            tile = T.if_then_else(seg < waves, seg * SMS + pid, first + r)
            begin = T.if_then_else(seg < waves, 0, T.max(lo - r * chunks, 0))
            end = T.if_then_else(seg < waves, chunks, T.min(hi - r * chunks, chunks))
            if begin < end:
                row, col = panel_tile(tile, tiles_m, tiles_n, PANEL)
                T.clear(acc)
                for j in T.serial(chunks):
                    if begin + j < end:
                        for k in T.Pipelined(CHUNK, num_stages=STAGES):
                            T.copy(A[row * BLOCK_M, ((begin + j) * CHUNK + k) * BLOCK_K], A_tile)
                            T.copy(B[((begin + j) * CHUNK + k) * BLOCK_K, col * BLOCK_N], B_tile)
                            T.gemm(A_tile, B_tile, acc)
                if seg < waves:
                    T.copy(acc, C_tile)
                    T.copy(C_tile, C[row * BLOCK_M, col * BLOCK_N])
                else:
                    T.atomic_add(partial[r, 0, 0], acc)

    with T.Kernel(T.max(rest, 1), threads=128) as f:  # launch 3: the last wave's tiles into C
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if f < rest:
            out_row, out_col = panel_tile(first + f, tiles_m, tiles_n, PANEL)
            T.copy(partial[f, 0, 0], out)
            T.copy(out, C[out_row * BLOCK_M, out_col * BLOCK_N])

    return C
