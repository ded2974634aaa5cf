"""copy_tiles with slice syntax for both copies (A[start : start + BLOCK]) and the tile moved
element by element into a second fragment in T.Parallel before it is stored.
"""

KERNEL = "copy_tiles"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        start = bx * BLOCK
        loaded = T.alloc_fragment((BLOCK,), T.float16)
        out = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[start : start + BLOCK], loaded)
        for t in T.Parallel(BLOCK):
            out[t] = loaded[t]
        T.copy(out, B[start : start + BLOCK])
    return B
