"""row_sum filling the tile from global memory in T.Parallel (zero where the row or column is past
the edge, cast to float32 on the way) and writing C from a guarded T.Parallel, instead of T.copy.
"""

KERNEL = "row_sum"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = bx * BLOCK_M + i
            x[i, j] = T.if_then_else(row < M and j < N, T.cast(A[row, j], T.float32), 0.0)
        T.reduce_sum(x, sums, dim=1)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = sums[i]
    return C
