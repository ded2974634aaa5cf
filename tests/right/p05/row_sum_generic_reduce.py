"""row_sum through the generic T.reduce(rows, sums, "sum", dim=1, clear=True) rather than T.reduce_sum,
the fp16 tile first widened into an fp32 fragment by T.copy. (T.reduce, unlike T.reduce_sum, takes no
dim=-1: TileLang 0.1.15 rejects it with "Invalid reduce output shape".)
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
        half_rows = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        rows = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], half_rows)
        T.copy(half_rows, rows)
        T.reduce(rows, sums, "sum", dim=1, clear=True)
        T.copy(sums, C[bx * BLOCK_M])
    return C
