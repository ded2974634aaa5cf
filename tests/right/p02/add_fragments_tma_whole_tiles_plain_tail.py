"""add_fragments staging the sum in shared memory: whole tiles leave with a plain T.copy, which TileLang
turns into a TMA store on sm_90, and the last, partial tile with T.copy(..., disable_tma=True), whose plain
stores stop at N. Only a TMA store writes whole 16-byte units past the end, so this kernel writes nothing
outside C (it passes on the H200, issue 40 item 1).
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
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        c = T.alloc_shared((BLOCK,), T.float16)
        T.copy(A[lo], a)
        T.copy(B[lo], b)
        for t in T.Parallel(BLOCK):
            c[t] = a[t] + b[t]
        if lo + BLOCK <= N:
            T.copy(c, C[lo])
        else:
            T.copy(c, C[lo], disable_tma=True)
    return C
