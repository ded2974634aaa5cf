"""copy_serial indexing with step + t instead of step * THREADS + t: the steps overlap and most of B is
never written.
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
                i = step + t
                if i < N:
                    B[i] = A[i]
    return B
