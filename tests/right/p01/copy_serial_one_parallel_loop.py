"""copy_serial with the whole vector in one T.Parallel(N) loop, no T.serial steps: how a learner of the
original course writes its one-block copy by hand. TileLang gives each thread N / THREADS elements in
a loop of its own, which is the rung's serial loop written for you; the rung's lesson (one block,
T.Parallel mapping iterations onto its threads) is in it, so the concept check accepts it.
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
        for i in T.Parallel(N):
            B[i] = A[i]
    return B
