"""Right numbers the wrong way: a hand-written multiply-add loop instead of T.gemm."""

import tilelang
import tilelang.language as T

PUZZLE = "08"
KERNELS = "matmul_naive"
WANTS = "T.gemm"


@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            for k in T.serial(K):
                acc[i, j] += T.cast(A[by * BLOCK_M + i, k], T.float32) * T.cast(B[k, bx * BLOCK_N + j], T.float32)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
