"""outer_add_fragments computing its tile in one T.Parallel with three loop variables: the columns
split into BLOCK_N // 4 groups of 4 (j = 4 * g + l), so the sum's column is an expression of two of them.
"""

KERNEL = "outer_add_fragments"

import tilelang
import tilelang.language as T


@tilelang.jit
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_fragment((BLOCK_M,), T.float16)
        b = T.alloc_fragment((BLOCK_N,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M], a)
        T.copy(B[bx * BLOCK_N], b)
        for i, g, lane in T.Parallel(BLOCK_M, BLOCK_N // 4, 4):
            c[i, g * 4 + lane] = a[i] + b[g * 4 + lane]
        T.copy(c, C[by * BLOCK_M, bx * BLOCK_N])
    return C
