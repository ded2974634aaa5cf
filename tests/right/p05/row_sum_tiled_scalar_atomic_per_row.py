"""row_sum_tiled split over the columns with a scalar atomic per row: a first launch zeroes C, then each
block of a 2-D grid sums its tile's rows and one thread per row adds that row's sum into C[row] with
T.atomic_add(C[row], x) (the element form, lowered to tl.atomic_add_elem_op), guarded by an if at the
tail rows.
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
        for i in T.Parallel(BLOCK_M):
            if zb * BLOCK_M + i < M:
                C[zb * BLOCK_M + i] = 0.0
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
