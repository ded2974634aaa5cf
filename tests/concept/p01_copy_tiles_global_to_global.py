"""Right numbers the wrong way, the original course's block-parallel copy: each block copies its slice
of A into B with one T.copy, global memory to global memory, and no fragment holds the tile."""

import tilelang
import tilelang.language as T

PUZZLE = "01"
KERNELS = "copy_tiles"
WANTS = "into a fragment (T.alloc_fragment)"
INSTEAD = "your kernel copies A straight into B with one T.copy, global memory to global memory"


@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        T.copy(A[bx * BLOCK : (bx + 1) * BLOCK], B[bx * BLOCK : (bx + 1) * BLOCK])
    return B
