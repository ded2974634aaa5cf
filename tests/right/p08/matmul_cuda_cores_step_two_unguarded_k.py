"""matmul_cuda_cores stepping its K loop by two with T.serial(0, K, 2) and adding the products of k and
k + 1 in each step, with no guard on k + 1 (only rows and columns are guarded, in a T.if_then_else). For
an odd K the last step reads A[r, K] and B[K, c], one past K: TileLang's safe-memory pass guards those
global loads (its CUDA for K = 131 reads them only while k / 2 < 65) and they read 0, so the sum is right.
"""

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
        for k in T.serial(0, K, 2):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                r = by * BLOCK_M + i
                c = bx * BLOCK_N + j
                inside = r < M and c < N
                acc[i, j] += T.if_then_else(inside, T.cast(A[r, k], T.float32) * T.cast(B[k, c], T.float32), 0.0)
                acc[i, j] += T.if_then_else(
                    inside, T.cast(A[r, k + 1], T.float32) * T.cast(B[k + 1, c], T.float32), 0.0
                )
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
