"""Adversarial submission: `add` computes the right C and also overwrites its input A with the sum."""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = A[bx * BLOCK + t] + B[bx * BLOCK + t]
                A[bx * BLOCK + t] = C[bx * BLOCK + t]
    return C
