"""Adversarial submission: `add` computes C right and also stores one element past the end of a
shared-memory buffer in every block (scratch[t + 1] reaches scratch[BLOCK])."""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        scratch = T.alloc_shared((BLOCK,), T.float16)
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = A[bx * BLOCK + t] + B[bx * BLOCK + t]
                scratch[t + 1] = A[bx * BLOCK + t]
    return C
