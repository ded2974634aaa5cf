"""softmax that stores the unnormalized exponentials to C, then reads C's rows back (transposed, into a fragment of
its own) and divides them by their sums. TileLang puts no barrier between a block's stores to global memory and its
later loads, and the read-back's threads are not the ones that stored: on an H200 4 or 5 of the 7 cases read NaN
(the poison the grader fills C with), a different count in each of three runs
(docs/results/data/h100-2026-12-05-sixth/readback/). The simulator runs a block's statements one after another and
had passed it; it now gives no verdict on the read-back (grader.pipeline.simulate.races.RaceWatch.read_back)."""

KERNEL = "softmax"
CAUGHT_BY = "gpu"
SIMULATOR_MISSES = "which thread stored each element decides the read-back: no verdict on the CPU (RaceWatch.read_back)"

import tilelang
import tilelang.language as T

LOG2E = 1.4426950408889634


@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        back = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float16)
        T.copy(A[bx * BLOCK_M, 0], tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.if_then_else(j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.exp2(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            tile[i, j] = T.cast(x[i, j], T.float16)
        T.copy(tile, C[bx * BLOCK_M, 0])
        for j, i in T.Parallel(BLOCK_N, BLOCK_M):
            back[j, i] = C[bx * BLOCK_M + i, j]
        for j, i in T.Parallel(BLOCK_N, BLOCK_M):
            if bx * BLOCK_M + i < M and j < N:
                C[bx * BLOCK_M + i, j] = T.cast(T.cast(back[j, i], T.float32) / row_sum[i], T.float16)
    return C
