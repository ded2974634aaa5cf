"""softmax_online with T.exp on unscaled inputs, each tile's maxima reduced into their own fragment
(clear=True), and the running max updated in T.Parallel through scalar temporaries
(m_old = row_max[i]; m_new = T.max(m_old, tile_max[i])) instead of a saved copy and
T.reduce_max(..., clear=False).
"""

KERNEL = "softmax_online"

import tilelang
import tilelang.language as T


@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_max = T.alloc_fragment((BLOCK_M,), T.float32)
        rescale = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        T.fill(row_max, -T.infinity(T.float32))
        T.fill(row_sum, 0.0)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.if_then_else(k * BLOCK_N + j < N, T.cast(tile[i, j], T.float32), -T.infinity(T.float32))
            T.reduce_max(x, tile_max, dim=1)
            for i in T.Parallel(BLOCK_M):
                m_old = row_max[i]
                m_new = T.max(m_old, tile_max[i])
                rescale[i] = T.exp(m_old - m_new)
                row_max[i] = m_new
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp(x[i, j] - row_max[i])
            T.reduce_sum(x, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * rescale[i] + tile_sum[i]
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                tile[i, j] = T.cast(T.exp(T.cast(tile[i, j], T.float32) - row_max[i]) / row_sum[i], T.float16)
            T.copy(tile, C[bx * BLOCK_M, k * BLOCK_N])
    return C
