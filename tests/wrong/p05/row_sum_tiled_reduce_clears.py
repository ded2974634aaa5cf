"""row_sum_tiled reducing every tile into the sums with the default clear=True: only the last
column tile counts."""

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
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(sums)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            T.reduce_sum(tile, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M])
    return C
