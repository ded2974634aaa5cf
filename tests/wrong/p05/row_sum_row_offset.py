"""row_sum reading rows from bx instead of bx * BLOCK_M: blocks overlap and most rows are skipped."""

KERNEL = "row_sum"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx, 0], tile)
        T.reduce_sum(tile, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M])
    return C
