"""matmul_cuda_cores whose K loop stops one short (`T.serial(K - 1)`): the last column of A and row of B are
never multiplied in, so nearly every element is off by one product."""

KERNEL = "matmul_cuda_cores"
CAUGHT_BY = "gpu"

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
        for k in T.serial(K - 1):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                row = by * BLOCK_M + i
                col = bx * BLOCK_N + j
                if row < M and col < N:
                    acc[i, j] += T.cast(A[row, k], T.float32) * T.cast(B[k, col], T.float32)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C
