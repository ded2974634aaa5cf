"""softmax_online saving the old max after T.reduce_max has folded the tile in: the saved max is
already the new one, so the correction exp2(prev - new) is always 1 and the running sum is never
rescaled when a tile raises the max."""

KERNEL = "softmax_online"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T

LOG2E = 1.4426950408889634


@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        T.fill(row_max, -T.infinity(T.float32))
        T.clear(row_sum)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.if_then_else(
                    k * BLOCK_N + j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32)
                )
            T.reduce_max(x, row_max, dim=1, clear=False)
            T.copy(row_max, prev_max)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp2(x[i, j] - row_max[i])
            T.reduce_sum(x, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * T.exp2(prev_max[i] - row_max[i]) + tile_sum[i]
        for i in T.Parallel(BLOCK_M):
            row_sum[i] = 1.0 / row_sum[i]
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                tile[i, j] = T.cast(T.exp2(T.cast(tile[i, j], T.float32) * LOG2E - row_max[i]) * row_sum[i], T.float16)
            T.copy(tile, C[bx * BLOCK_M, k * BLOCK_N])
    return C
