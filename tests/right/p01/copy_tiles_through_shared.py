"""copy_tiles staging the tile in shared memory on the way in (A -> shared -> fragment -> B)
instead of copying A straight into the fragment.
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
        staged = T.alloc_shared((BLOCK,), T.float16)
        tile = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], staged)
        T.copy(staged, tile)
        T.copy(tile, B[bx * BLOCK])
    return B
