"""copy_threads looping T.Parallel(THREADS), one element per thread: each block copies only the first
THREADS of its BLOCK elements.
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
        for t in T.Parallel(THREADS):
            i = bx * BLOCK + t
            if i < N:
                B[i] = A[i]
    return B
