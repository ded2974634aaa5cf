"""add walking the block in T.serial rounds of THREADS elements, each a T.Parallel(THREADS), with
B read before A (the operands swapped: B[i] + A[i]).
"""

KERNEL = "add"

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for r in T.serial(BLOCK // THREADS):
            for t in T.Parallel(THREADS):
                i = bx * BLOCK + r * THREADS + t
                if i < N:
                    C[i] = B[i] + A[i]
    return C
