"""copy_serial reading A[t] (the thread's position) instead of A[i]: every step copies the first
THREADS elements again.
"""

KERNEL = "copy_serial"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        for step in T.serial(T.ceildiv(N, THREADS)):
            for t in T.Parallel(THREADS):
                i = step * THREADS + t
                if i < N:
                    B[i] = A[t]
    return B
