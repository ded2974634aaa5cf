"""row_sum_tiled adding each row's partial sums into C with a scalar T.atomic_add per row, but without the
launch that zeroes C first: the adds land on whatever C held (the grader fills outputs with NaN), as if
T.empty gave zeros.
"""

KERNEL = "row_sum_tiled"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (cb, rb):
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[rb * BLOCK_M, cb * BLOCK_N], tile)
        T.copy(tile, wide)
        T.reduce_sum(wide, part, dim=1)
        for i in T.Parallel(BLOCK_M):
            if rb * BLOCK_M + i < M:
                T.atomic_add(C[rb * BLOCK_M + i], part[i])
    return C
