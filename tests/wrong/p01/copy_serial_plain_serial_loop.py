"""copy_serial with one plain T.serial loop over every element and no T.Parallel: each of the block's
THREADS threads runs the whole loop, so every element is copied THREADS times. The numbers come out
right; the grader refuses it because no T.Parallel loop hands the elements to the threads.
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
        for i in T.serial(N):
            B[i] = A[i]
    return B
