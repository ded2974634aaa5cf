"""row_sum_tiled reducing every column tile into the row sums as it goes (T.reduce_sum with
clear=False into a cleared fragment), instead of a 2-D accumulator and one reduction at the end.
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
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(sums)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], wide)
            T.reduce_sum(wide, sums, dim=1, clear=False)
        T.copy(sums, C[bx * BLOCK_M])
    return C
