"""Adversarial submission: the right kernel under another name (`vector_add` instead of `add`)."""

import tilelang
import tilelang.language as T


@tilelang.jit
def vector_add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = A[bx * BLOCK + t] + B[bx * BLOCK + t]
    return C
