"""copy_tiles storing the fragment with B[bx * BLOCK] = tile: an element can only take one value; a
whole tile needs T.copy.
"""

KERNEL = "copy_tiles"
CAUGHT_BY = "compile"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], tile)
        B[bx * BLOCK] = tile
    return B
