"""row_sum_tiled split over the column tiles, adding each tile's row sums into C with T.atomic_add, but C
is zeroed by the blocks of the first column tile, just before their own add, in the same launch rather
than in a launch of its own. On a GPU the blocks of a row tile reach that point together: an add that
lands before the zeroing store is wiped out.
"""

KERNEL = "row_sum_tiled"
CAUGHT_BY = "gpu"
# In the simulator's one-block-at-a-time order the zeroing block runs first and the sums add up: only its
# check for races between blocks (a plain store and an atomic add on one element) fails this on the CPU.

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (cb, rb):
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        zeros = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[rb * BLOCK_M, cb * BLOCK_N], tile)
        T.copy(tile, wide)
        T.reduce_sum(wide, part, dim=1)
        if cb == 0:
            T.clear(zeros)
            T.copy(zeros, C[rb * BLOCK_M])
        T.atomic_add(C[rb * BLOCK_M], part)
    return C
