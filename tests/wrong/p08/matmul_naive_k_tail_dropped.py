"""matmul_naive that covers the tails of M and N (T.ceildiv for the grid) but walks K in K // BLOCK_K
steps: the last partial K tile is never multiplied, so where K is not a multiple of BLOCK_K every
element of C misses its last few products (K = 131, BLOCK_K = 32: 3 of 131)."""

KERNEL = "matmul_naive"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(K // BLOCK_K):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
