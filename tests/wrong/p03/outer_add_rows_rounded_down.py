"""outer_add whose grid has M // BLOCK_M rows of blocks: the last, partial row of tiles is never launched."""

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
    with T.Kernel(T.ceildiv(N, BLOCK_N), M // BLOCK_M, threads=THREADS) as (bx, by):
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = by * BLOCK_M + i
            col = bx * BLOCK_N + j
            if row < M and col < N:
                C[row, col] = A[row] + B[col]
    return C
