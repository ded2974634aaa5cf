"""matmul_tuned rasterizing the blocks in column panels (T.use_swizzle(..., order="column")) instead
of row panels, and filling the accumulator with T.fill instead of T.clear.
"""

KERNEL = "matmul_tuned"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        c_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL, order="column")
        T.fill(acc, 0.0)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], b)
            T.gemm(a, b, acc)
        T.copy(acc, c_tile)
        T.copy(c_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C
