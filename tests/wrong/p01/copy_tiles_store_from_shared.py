"""copy_tiles staging the tile in shared memory (T.alloc_shared) and storing it to B from there: on
Hopper that T.copy becomes a TMA store, which writes whole 16-byte units and so runs up to 7 elements
past the end of B when N is not a multiple of 8. Every simulated case refuses it because the tile never goes
through a fragment; the CLI, which compiles each case and so sees the TMA store, also finds the 7 elements
written past B at odd_4097.
"""

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
        tile = T.alloc_shared((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], tile)
        T.copy(tile, B[bx * BLOCK])
    return B
