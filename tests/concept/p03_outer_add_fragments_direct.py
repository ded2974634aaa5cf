"""Right numbers the wrong way: outer_add_fragments reading A and B straight from global memory."""

import tilelang
import tilelang.language as T

PUZZLE = "03"
KERNELS = "outer_add_fragments"
WANTS = "T.copy into fragments"


@tilelang.jit
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row, col = by * BLOCK_M + i, bx * BLOCK_N + j
            if row < M and col < N:
                C[row, col] = A[row] + B[col]
    return C
