"""row_sum_tiled without T.clear: the first column tile is reduced with clear=True and the later
ones with clear=False (an `if k == 0` branch), each into a per-tile sum.
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
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.cast(tile[i, j], T.float32)
            if k == 0:
                T.reduce_sum(x, sums, dim=1, clear=True)
            else:
                T.reduce_sum(x, sums, dim=1, clear=False)
        T.copy(sums, C[bx * BLOCK_M])
    return C
