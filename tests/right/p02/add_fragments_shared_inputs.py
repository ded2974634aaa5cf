"""add_fragments loading A and B into shared memory (T.alloc_shared) and only the sum into a
fragment, with slice syntax for the copies.
"""

KERNEL = "add_fragments"

import tilelang
import tilelang.language as T


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        lo = bx * BLOCK
        a = T.alloc_shared((BLOCK,), T.float16)
        b = T.alloc_shared((BLOCK,), T.float16)
        c = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[lo : lo + BLOCK], a)
        T.copy(B[lo : lo + BLOCK], b)
        for t in T.Parallel(BLOCK):
            c[t] = a[t] + b[t]
        T.copy(c, C[lo : lo + BLOCK])
    return C
