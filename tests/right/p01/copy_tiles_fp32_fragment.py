"""copy_tiles holding the tile in a float32 fragment: T.copy converts fp16 -> fp32 on the way in and
back to fp16 on the way out, which is exact.
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
        wide = T.alloc_fragment((BLOCK,), T.float32)
        T.copy(A[bx * BLOCK], wide)
        T.copy(wide, B[bx * BLOCK])
    return B
