"""copy_threads without the guard: the last, partial block reads past the end of A and writes
past the end of B.
"""

KERNEL = "copy_threads"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            B[bx * BLOCK + t] = A[bx * BLOCK + t]
    return B
