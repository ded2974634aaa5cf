"""matmul_cuda_cores guarding with T.if_then_else instead of an `if`: every thread adds a product or a
zero, the reads of A and B sitting inside the selected branch, so a row or column past the edge is never
read. The K loop steps by two with T.serial(0, K, 2), the second product of a step guarded by k + 1 < K.
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
                    inside and k + 1 < K, T.cast(A[r, k + 1], T.float32) * T.cast(B[k + 1, c], T.float32), 0.0
                )
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
