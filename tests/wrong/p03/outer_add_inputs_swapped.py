"""outer_add computing A[col] + B[row]: the transpose of the answer, and past the end of A or B when M != N."""

KERNEL = "outer_add"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = by * BLOCK_M + i
            col = bx * BLOCK_N + j
            if row < M and col < N:
                C[row, col] = A[col] + B[row]
    return C
