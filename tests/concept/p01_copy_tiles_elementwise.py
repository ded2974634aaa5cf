"""Right numbers the wrong way: copy_tiles written element by element, no T.copy, no fragment."""

import tilelang
import tilelang.language as T

PUZZLE = "01"
KERNELS = "copy_tiles"
WANTS = "T.copy from A into a fragment"
INSTEAD = "your kernel writes B element by element in a T.Parallel loop, with no T.copy"


@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                B[bx * BLOCK + t] = A[bx * BLOCK + t]
    return B
