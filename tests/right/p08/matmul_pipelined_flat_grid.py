"""matmul_pipelined on a 1-D grid of ceildiv(M, BLOCK_M) * ceildiv(N, BLOCK_N) blocks, the tile's
row and column recovered with // and %, and the copies written with slice syntax.
"""

KERNEL = "matmul_pipelined"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_pipelined(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    col_tiles = T.ceildiv(N, BLOCK_N)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * col_tiles, threads=THREADS) as t:
        r0 = (t // col_tiles) * BLOCK_M
        c0 = (t % col_tiles) * BLOCK_N
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[r0 : r0 + BLOCK_M, k * BLOCK_K : (k + 1) * BLOCK_K], a)
            T.copy(B[k * BLOCK_K : (k + 1) * BLOCK_K, c0 : c0 + BLOCK_N], b)
            T.gemm(a, b, acc)
        T.copy(acc, C[r0 : r0 + BLOCK_M, c0 : c0 + BLOCK_N])
    return C
