"""row_sum_tiled that keeps its partial sums transposed, columns down and rows across (BLOCK_N, BLOCK_M),
and sums them down dim 0 with the generic T.reduce(..., "sum", dim=0, clear=True).
"""

KERNEL = "row_sum_tiled"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        cols_by_rows = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(cols_by_rows)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for j, i in T.Parallel(BLOCK_N, BLOCK_M):
                cols_by_rows[j, i] += T.cast(tile[i, j], T.float32)
        T.reduce(cols_by_rows, sums, "sum", dim=0, clear=True)
        T.copy(sums, C[bx * BLOCK_M])
    return C
