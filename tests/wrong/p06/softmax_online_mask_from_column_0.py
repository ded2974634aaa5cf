"""softmax_online masking the padding with `j < N`, as `softmax` does, instead of the tile's offset
`k * BLOCK_N + j < N`: j never reaches BLOCK_N, so on a row longer than one tile nothing is ever masked,
and the zeros T.copy reads past column N in the last tile each add exp(0 - max) to the row's sum."""

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
                x[i, j] = T.if_then_else(j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
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
