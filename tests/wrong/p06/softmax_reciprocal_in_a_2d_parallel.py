"""softmax inverting the row sums inside the T.Parallel over the tile's rows and columns: each thread inverts its
copy once per column it covers, an even count at BLOCK_N = 128 on 128 threads, so the sums come out uninverted
and the output is x * sum on the GPU (the simulator inverts once; repeated_updates catches it). A learner's
kernel, held out from the corpora until 2026-12-05."""

KERNEL = "softmax"
CAUGHT_BY = "gpu"

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
        T.copy(A[bx * BLOCK_M, 0], tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.if_then_else(j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.exp2(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):  # noqa: B007  (the bug: the update leaves j out)
            row_sum[i] = 1.0 / row_sum[i]
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            tile[i, j] = T.cast(x[i, j] * row_sum[i], T.float16)
        T.copy(tile, C[bx * BLOCK_M, 0])

    return C
