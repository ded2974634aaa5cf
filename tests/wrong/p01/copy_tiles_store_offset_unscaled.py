"""copy_tiles storing the tile at B[bx] instead of B[bx * BLOCK]: the tiles pile up at the start of B."""

KERNEL = "copy_tiles"
CAUGHT_BY = "gpu"

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
        T.copy(tile, B[bx])
    return B
