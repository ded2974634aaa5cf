"""Right numbers the wrong way: every element copied in plain serial loops, no T.Parallel."""

import tilelang
import tilelang.language as T

PUZZLE = "01"
KERNELS = "copy_serial,copy_threads"
WANTS = "T.Parallel"
INSTEAD = "with no T.Parallel: every thread of the block runs that whole loop"


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        for i in T.serial(N):
            B[i] = A[i]
    return B


@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.serial(BLOCK):
            if bx * BLOCK + t < N:
                B[bx * BLOCK + t] = A[bx * BLOCK + t]
    return B
