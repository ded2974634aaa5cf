"""copy_serial counting its steps as (N + THREADS - 1) // THREADS by hand instead of T.ceildiv, with
the element index computed by a plain Python helper function.
"""

KERNEL = "copy_serial"

import tilelang
import tilelang.language as T


def element(step, t, width):
    return step * width + t


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        for step in T.serial((N + THREADS - 1) // THREADS):
            for t in T.Parallel(THREADS):
                if element(step, t, THREADS) < N:
                    B[element(step, t, THREADS)] = A[element(step, t, THREADS)]
    return B
