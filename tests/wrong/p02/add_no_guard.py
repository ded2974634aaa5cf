"""add without the guard: the last, partial block reads past the ends of A and B and writes past
the end of C.
"""

KERNEL = "add"
CAUGHT_BY = "gpu"

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
            C[i] = A[i] + B[i]
    return C
