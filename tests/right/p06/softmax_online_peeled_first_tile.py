"""softmax_online that starts the running max and sum from the first column tile (reductions with
clear=True, no T.fill / T.clear) and folds in the others from k = 1; the old maxima saved with a
T.Parallel copy, the running sum rescaled first and then added to by T.reduce_sum(clear=False),
and the tiles loaded in a T.macro.
"""

KERNEL = "softmax_online"

import math

import tilelang
import tilelang.language as T

LOG2E = math.log2(math.e)


@T.macro
def load_scaled(A, tile, x, row0, col0, n_cols):
    T.copy(A[row0, col0], tile)
    for i, j in T.Parallel(x.shape[0], x.shape[1]):
        x[i, j] = T.if_then_else(col0 + j < n_cols, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))


@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        old_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        load_scaled(A, tile, x, bx * BLOCK_M, 0, N)
        T.reduce_max(x, row_max, dim=1, clear=True)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.exp2(x[i, j] - row_max[i])
        T.reduce_sum(x, row_sum, dim=1, clear=True)
        for k in T.serial(1, T.ceildiv(N, BLOCK_N)):
            load_scaled(A, tile, x, bx * BLOCK_M, k * BLOCK_N, N)
            for i in T.Parallel(BLOCK_M):
                old_max[i] = row_max[i]
            T.reduce_max(x, row_max, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * T.exp2(old_max[i] - row_max[i])
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp2(x[i, j] - row_max[i])
            T.reduce_sum(x, row_sum, dim=1, clear=False)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            load_scaled(A, tile, x, bx * BLOCK_M, k * BLOCK_N, N)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                tile[i, j] = T.cast(T.exp2(x[i, j] - row_max[i]) / row_sum[i], T.float16)
            T.copy(tile, C[bx * BLOCK_M, k * BLOCK_N])
    return C
