"""outer_add_fragments with the A and B slices in shared memory and the sum computed in a float32
fragment, which the final T.copy converts to fp16.
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
        a = T.alloc_shared((BLOCK_M,), T.float16)
        b = T.alloc_shared((BLOCK_N,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(A[by * BLOCK_M], a)
        T.copy(B[bx * BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            c[i, j] = T.cast(a[i], T.float32) + T.cast(b[j], T.float32)
        T.copy(c, C[by * BLOCK_M, bx * BLOCK_N])
    return C
