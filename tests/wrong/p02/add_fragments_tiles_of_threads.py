"""add_fragments with fragments of THREADS elements (one per thread): each block computes only THREADS
of its BLOCK sums.
"""

KERNEL = "add_fragments"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        a = T.alloc_fragment((THREADS,), T.float16)
        b = T.alloc_fragment((THREADS,), T.float16)
        c = T.alloc_fragment((THREADS,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(THREADS):
            c[t] = a[t] + b[t]
        T.copy(c, C[bx * BLOCK])
    return C
