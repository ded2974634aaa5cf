"""matmul_cuda_cores with the grid axes swapped (the first counts row tiles) and the guard as one
T.if_then_else expression instead of an if."""

KERNEL = "matmul_cuda_cores"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_cuda_cores(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                inside = (bm * BLOCK_M + i < M) & (bn * BLOCK_N + j < N)
                a = T.if_then_else(inside, T.cast(A[bm * BLOCK_M + i, k], T.float32), 0.0)
                acc[i, j] += a * T.if_then_else(inside, T.cast(B[k, bn * BLOCK_N + j], T.float32), 0.0)
        T.copy(acc, C[bm * BLOCK_M, bn * BLOCK_N])
    return C
