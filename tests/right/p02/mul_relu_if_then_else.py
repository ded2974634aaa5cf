"""mul_relu with the ReLU written as T.if_then_else(p > 0, p, 0) on a named product, instead of
T.max.
"""

KERNEL = "mul_relu"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            i = bx * BLOCK + t
            if i < N:
                p = A[i] * B[i]
                C[i] = T.if_then_else(p > 0, p, T.float16(0))
    return C
