"""mul_relu written in the tile style: both inputs copied into fragments with T.copy, the fused
product and ReLU in T.Parallel over tile positions, one T.copy out (no hand-written guard).
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
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            a[t] = T.max(a[t] * b[t], 0)
        T.copy(a, C[bx * BLOCK])
    return C
