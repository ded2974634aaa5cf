"""add_fragments adding B's tile into A's fragment in place (a[t] += b[t]) and storing that one,
with two fragments instead of three.
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
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            a[t] += b[t]
        T.copy(a, C[bx * BLOCK])
    return C
