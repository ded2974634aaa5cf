"""row_sum_tiled split over the columns as well as the rows: a first launch zeroes C, then each block of
a 2-D grid sums one BLOCK_M x BLOCK_N tile's rows and adds them into C with T.atomic_add, so the
blocks that share a row tile may add in any order.
"""

KERNEL = "row_sum_tiled"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as zb:
        zeros = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(zeros)
        T.copy(zeros, C[zb * BLOCK_M])
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (cb, rb):
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[rb * BLOCK_M, cb * BLOCK_N], tile)
        T.copy(tile, wide)
        T.reduce_sum(wide, part, dim=1)
        T.atomic_add(C[rb * BLOCK_M], part)
    return C
