"""gemv computing the products straight from global A and B in T.Parallel (zero past either edge),
reducing each tile with clear=True into a tile sum added to the running sums by hand, and writing
C with a guarded store.
"""

KERNEL = "gemv"

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        total = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(total)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                row = bx * BLOCK_M + i
                col = k * BLOCK_K + j
                products[i, j] = T.if_then_else(
                    row < M and col < K, T.cast(A[row, col], T.float32) * T.cast(B[col], T.float32), 0.0
                )
            T.reduce_sum(products, tile_sum, dim=1, clear=True)
            for i in T.Parallel(BLOCK_M):
                total[i] = total[i] + tile_sum[i]
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.cast(total[i], T.float16)
    return C
