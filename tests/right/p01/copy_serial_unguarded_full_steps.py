"""copy_serial with the full steps copied unguarded and the tail as one separate guarded step,
instead of one guarded loop of T.ceildiv(N, THREADS) steps.
"""

KERNEL = "copy_serial"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        full = N // THREADS
        for step in T.serial(full):
            for t in T.Parallel(THREADS):
                B[step * THREADS + t] = A[step * THREADS + t]
        for t in T.Parallel(THREADS):
            if full * THREADS + t < N:
                B[full * THREADS + t] = A[full * THREADS + t]
    return B
