"""Right numbers the wrong way: the tile goes A -> shared memory -> B, the staging a learner knows from
GEMM examples, and never through a fragment (registers), which is what the rung teaches."""

import tilelang
import tilelang.language as T

PUZZLE = "01"
KERNELS = "copy_tiles"
WANTS = "into a fragment (T.alloc_fragment)"
INSTEAD = "your kernel moves its tile through shared memory (A_shared, T.alloc_shared), with no fragment"


@tilelang.jit
def copy_tiles(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        A_shared = T.alloc_shared((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], A_shared)
        T.copy(A_shared, B[bx * BLOCK])
    return B
