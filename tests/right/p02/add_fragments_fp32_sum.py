"""add_fragments summing into a float32 fragment and letting the final T.copy convert it to fp16,
instead of adding in fp16.
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
        total = T.alloc_fragment((BLOCK,), T.float32)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            total[t] = T.cast(a[t], T.float32) + T.cast(b[t], T.float32)
        T.copy(total, C[bx * BLOCK])
    return C
