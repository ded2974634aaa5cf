"""row_sum staging the rows in shared memory, converting them to a float32 fragment in T.Parallel,
and summing with T.reduce_sum after an explicit T.clear and clear=False.
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
        staged = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], staged)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.cast(staged[i, j], T.float32)
        T.clear(sums)
        T.reduce_sum(x, sums, dim=1, clear=False)
        T.copy(sums, C[bx * BLOCK_M])
    return C
