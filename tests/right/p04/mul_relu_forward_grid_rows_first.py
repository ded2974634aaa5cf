"""mul_relu_forward with the grid axes swapped (first axis over row tiles) and the ReLU as
T.if_then_else on the fp32 product, writing the result into A's fragment in place.
"""

KERNEL = "mul_relu_forward"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu_forward(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        a = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        b = T.alloc_fragment((BLOCK_N,), T.float16)
        T.copy(A[bm * BLOCK_M, bn * BLOCK_N], a)
        T.copy(B[bn * BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            p = T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32)
            a[i, j] = T.cast(T.if_then_else(p > 0.0, p, 0.0), T.float16)
        T.copy(a, C[bm * BLOCK_M, bn * BLOCK_N])
    return C
