"""add computing the sum in float32 (both inputs cast up, the sum cast back to fp16) instead of in
fp16, with the guard written as T.if_then_else on the loaded values.
"""

KERNEL = "add"

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
            i = bx * BLOCK + t
            if i < N:
                C[i] = T.cast(T.cast(A[i], T.float32) + T.cast(B[i], T.float32), T.float16)
    return C
