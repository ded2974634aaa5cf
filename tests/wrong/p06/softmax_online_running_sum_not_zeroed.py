"""softmax_online that never zeroes its running sum before the first walk: the first tile's update
rescales whatever the fragment held (garbage on a GPU, NaN in the simulator) and adds the tile's sum
to it, so every probability of the row is off."""

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
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.if_then_else(
                    k * BLOCK_N + j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32)
                )
            T.copy(row_max, prev_max)
            T.reduce_max(x, row_max, dim=1, clear=False)
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
