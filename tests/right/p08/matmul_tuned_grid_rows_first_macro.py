"""matmul_tuned with the grid axes swapped (first axis over row tiles of C), the K loop body in a
T.macro, and the tile corners named once as Python values.
"""

KERNEL = "matmul_tuned"

import tilelang
import tilelang.language as T


@T.macro
def multiply_step(A, B, a, b, acc, row0, col0, k0):
    T.copy(A[row0, k0], a)
    T.copy(B[k0, col0], b)
    T.gemm(a, b, acc)


@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        row0 = bm * BLOCK_M
        col0 = bn * BLOCK_N
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        c_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            multiply_step(A, B, a, b, acc, row0, col0, k * BLOCK_K)
        T.copy(acc, c_tile)
        T.copy(c_tile, C[row0, col0])
    return C
