"""add with a 2-D T.Parallel(BLOCK // THREADS, THREADS) and the index computed by a Python helper,
instead of a flat T.Parallel(BLOCK).
"""

KERNEL = "add"

import tilelang
import tilelang.language as T


def position(block, row, lane, block_size, width):
    return block * block_size + row * width + lane


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for r, t in T.Parallel(BLOCK // THREADS, THREADS):
            i = position(bx, r, t, BLOCK, THREADS)
            if i < N:
                C[i] = A[i] + B[i]
    return C
