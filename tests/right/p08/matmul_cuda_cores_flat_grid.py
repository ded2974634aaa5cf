"""matmul_cuda_cores on a flat grid: one block index, split into row and column tile with // and %."""

KERNEL = "matmul_cuda_cores"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_cuda_cores(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * T.ceildiv(N, BLOCK_N), threads=THREADS) as b:
        by = b // T.ceildiv(N, BLOCK_N)
        bx = b % T.ceildiv(N, BLOCK_N)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                if by * BLOCK_M + i < M and bx * BLOCK_N + j < N:
                    acc[i, j] += T.cast(A[by * BLOCK_M + i, k], T.float32) * T.cast(B[k, bx * BLOCK_N + j], T.float32)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
