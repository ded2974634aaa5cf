"""copy_serial that counts its steps with N // THREADS: the last, partial step never runs."""

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
        for step in T.serial(N // THREADS):
            for t in T.Parallel(THREADS):
                i = step * THREADS + t
                if i < N:
                    B[i] = A[i]
    return B
