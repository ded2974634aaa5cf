"""matmul_cuda_cores with scalar temporaries for the two factors and the store as a guarded
T.Parallel loop instead of T.copy."""

KERNEL = "matmul_cuda_cores"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_cuda_cores(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                if by * BLOCK_M + i < M and bx * BLOCK_N + j < N:
                    x = T.cast(A[by * BLOCK_M + i, k], T.float32)
                    y = T.cast(B[k, bx * BLOCK_N + j], T.float32)
                    acc[i, j] = acc[i, j] + x * y
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            if by * BLOCK_M + i < M and bx * BLOCK_N + j < N:
                C[by * BLOCK_M + i, bx * BLOCK_N + j] = acc[i, j]
    return C
