"""matmul_pipelined with the row and column offsets exchanged: rows at bx * BLOCK_N, columns at
by * BLOCK_M, so block (bx, by) computes the tile of block (by, bx).

Right when the grid is square and the tiles are too (M = N, BLOCK_M = BLOCK_N); otherwise whole
tiles are never written.
"""

KERNEL = "matmul_pipelined"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_pipelined(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[bx * BLOCK_N, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, by * BLOCK_M], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[bx * BLOCK_N, by * BLOCK_M])
    return C
