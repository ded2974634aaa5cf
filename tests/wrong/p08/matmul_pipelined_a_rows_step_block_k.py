"""matmul_pipelined whose A tile starts `by * BLOCK_K` rows down instead of `by * BLOCK_M`: a slip between two
block sizes. Each block's A tile is BLOCK_M rows long but the blocks' starts are BLOCK_K apart, so the tiles of
neighbouring blocks overlap and every block row but the first multiplies the wrong rows of A."""

KERNEL = "matmul_pipelined"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
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
            T.copy(A[by * BLOCK_K, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
