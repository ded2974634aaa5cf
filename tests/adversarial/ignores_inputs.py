"""Adversarial submission: `add` writes a fixed pattern that does not depend on A or B."""

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
                C[bx * BLOCK + t] = T.cast(t % 7, T.float16) - T.float16(3)
    return C
