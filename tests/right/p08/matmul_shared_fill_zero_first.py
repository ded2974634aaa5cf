"""matmul_shared with the accumulator allocated first and zeroed with T.fill(acc, 0) instead of T.clear."""

KERNEL = "matmul_shared"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.fill(acc, 0)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
