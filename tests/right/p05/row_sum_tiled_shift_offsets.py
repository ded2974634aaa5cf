"""row_sum_tiled with its offsets as shifts (bx << log2(BLOCK_M), k << log2(BLOCK_N): the block sizes are
powers of two), the tile count computed by hand, and the running sums kept by T.reduce_sum(clear=False)
into sums that T.fill zeroed.
"""

KERNEL = "row_sum_tiled"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    assert BLOCK_M & (BLOCK_M - 1) == 0 and BLOCK_N & (BLOCK_N - 1) == 0, "powers of two"
    row_shift, col_shift = BLOCK_M.bit_length() - 1, BLOCK_N.bit_length() - 1
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel((M + BLOCK_M - 1) >> row_shift, threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.fill(sums, 0.0)
        for k in T.serial((N + BLOCK_N - 1) >> col_shift):
            T.copy(A[bx << row_shift, k << col_shift], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                wide[i, j] = T.cast(tile[i, j], T.float32)
            T.reduce_sum(wide, sums, dim=1, clear=False)
        T.copy(sums, C[bx << row_shift])
    return C
