"""matmul_cuda_cores walking K in steps of 4 with a T.unroll inner loop (a guard on k for the tail of K),
the accumulator zeroed with T.fill, and the row and column guards as T.if_then_else on the loads.
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
        T.fill(acc, 0.0)
        for step in T.serial(T.ceildiv(K, 4)):
            for s in T.unroll(4):
                k = step * 4 + s
                for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                    row = by * BLOCK_M + i
                    col = bx * BLOCK_N + j
                    inside = row < M and col < N and k < K
                    a = T.if_then_else(inside, T.cast(A[row, k], T.float32), 0.0)
                    b = T.if_then_else(inside, T.cast(B[k, col], T.float32), 0.0)
                    acc[i, j] += a * b
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
