"""row_sum_tiled split over the columns as well as the rows, each block adding its tile's row sums into C
by reading C, adding and writing it back (T.copy, +, T.copy) instead of with T.atomic_add. Blocks that
share a row tile run at the same time on a GPU, so one block's read misses another's write and sums are
lost; run one block after another, it adds up."""

KERNEL = "row_sum_tiled"
CAUGHT_BY = "gpu"
# Run one block after another, as the simulator does, every block sees the previous one's write: only the
# simulator's check for races between blocks (issue 25) fails it on the CPU. short_rows_515x100 has a single
# column tile (N <= BLOCK_N), so no two blocks share a row there and that case passes.

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as zb:
        zeros = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(zeros)
        T.copy(zeros, C[zb * BLOCK_M])
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (cb, rb):
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        total = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[rb * BLOCK_M, cb * BLOCK_N], tile)
        T.copy(tile, wide)
        T.reduce_sum(wide, part, dim=1)
        T.copy(C[rb * BLOCK_M], total)
        for i in T.Parallel(BLOCK_M):
            total[i] += part[i]
        T.copy(total, C[rb * BLOCK_M])
    return C
