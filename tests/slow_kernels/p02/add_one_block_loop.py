"""add written like puzzle 01's copy_serial: one block walks the whole vector, BLOCK elements per step
of a serial loop, instead of one block per BLOCK elements.

Correct, but it runs on one SM: a launch of one block leaves every other SM of the GPU idle, and one
SM alone cannot keep enough loads in flight to come near the memory's bandwidth. The course's kernel
launches N / BLOCK blocks (32768 at the bench case).
"""

import tilelang
import tilelang.language as T

KERNEL = "add"
CAUSE = "parallelism"


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)

    with T.Kernel(1, threads=THREADS):
        for step in T.serial(T.ceildiv(N, BLOCK)):
            for t in T.Parallel(BLOCK):
                i = step * BLOCK + t
                if i < N:
                    C[i] = A[i] + B[i]
    return C
