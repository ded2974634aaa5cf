"""row_sum_tiled that assigns each column tile into its partial sums (`partial[i, j] = ...` for `+=`): every step
overwrites the last, so the row sums count the last column tile only. A row of one tile passes."""

KERNEL = "row_sum_tiled"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        partial = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(partial)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                partial[i, j] = T.cast(tile[i, j], T.float32)
        T.reduce_sum(partial, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M])

    return C
