"""copy_threads walking its block in a T.serial loop of BLOCK // THREADS rounds, each a
T.Parallel(THREADS), instead of one T.Parallel(BLOCK).
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
        base = bx * BLOCK
        for r in T.serial(BLOCK // THREADS):
            for t in T.Parallel(THREADS):
                if base + r * THREADS + t < N:
                    B[base + r * THREADS + t] = A[base + r * THREADS + t]
    return B
