"""copy_serial keeping the step's first element in a T.alloc_var that is advanced by THREADS after
each step, instead of computing step * THREADS.
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
        start = T.alloc_var(T.int32, init=0)
        for _ in T.serial(T.ceildiv(N, THREADS)):
            for t in T.Parallel(THREADS):
                if start + t < N:
                    B[start + t] = A[start + t]
            start = start + THREADS
    return B
