"""copy_threads with a 2-D T.Parallel(BLOCK // THREADS, THREADS): one row of THREADS elements per
round, instead of a flat T.Parallel(BLOCK). (BLOCK is a multiple of THREADS in every case.)
"""

KERNEL = "copy_threads"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for r, t in T.Parallel(BLOCK // THREADS, THREADS):
            i = bx * BLOCK + r * THREADS + t
            if i < N:
                B[i] = A[i]
    return B
