"""outer_add_fragments with every copy written in slice syntax, A[a:b] and C[a:b, c:d], the tile's
full extent even where it runs past the edge (T.copy clips both the loads and the store).
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
        T.copy(A[by * BLOCK_M : (by + 1) * BLOCK_M], a)
        T.copy(B[bx * BLOCK_N : (bx + 1) * BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            c[i, j] = a[i] + b[j]
        T.copy(c, C[by * BLOCK_M : (by + 1) * BLOCK_M, bx * BLOCK_N : (bx + 1) * BLOCK_N])
    return C
