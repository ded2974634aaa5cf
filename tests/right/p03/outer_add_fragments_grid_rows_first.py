"""outer_add_fragments with the grid axes swapped (first axis over row tiles, second over column
tiles) and the operands added as b[j] + a[i].
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
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        a = T.alloc_fragment((BLOCK_M,), T.float16)
        b = T.alloc_fragment((BLOCK_N,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[bm * BLOCK_M], a)
        T.copy(B[bn * BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            c[i, j] = b[j] + a[i]
        T.copy(c, C[bm * BLOCK_M, bn * BLOCK_N])
    return C
