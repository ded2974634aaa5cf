"""add_fragments whose grid is N // BLOCK: T.copy would handle the partial tile, but no block is launched for it."""

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
    with T.Kernel(N // BLOCK, threads=THREADS) as bx:
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        c = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            c[t] = a[t] + b[t]
        T.copy(c, C[bx * BLOCK])
    return C
