"""outer_add_fragments staging the result tile through shared memory (fragment -> shared -> C)
and copying C's tile with slice syntax, instead of storing the fragment directly.
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
        r0 = by * BLOCK_M
        c0 = bx * BLOCK_N
        a = T.alloc_fragment((BLOCK_M,), T.float16)
        b = T.alloc_fragment((BLOCK_N,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        staged = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[r0 : r0 + BLOCK_M], a)
        T.copy(B[c0 : c0 + BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            c[i, j] = a[i] + b[j]
        T.copy(c, staged)
        T.copy(staged, C[r0 : r0 + BLOCK_M, c0 : c0 + BLOCK_N])
    return C
