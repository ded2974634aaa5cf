"""Right numbers the wrong way: outer_add visiting its tile in plain serial loops, no T.Parallel."""

import tilelang
import tilelang.language as T

PUZZLE = "03"
KERNELS = "outer_add"
WANTS = "T.Parallel(BLOCK_M, BLOCK_N)"


@tilelang.jit
def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i in T.serial(BLOCK_M):
            for j in T.serial(BLOCK_N):
                if by * BLOCK_M + i < M and bx * BLOCK_N + j < N:
                    C[by * BLOCK_M + i, bx * BLOCK_N + j] = A[by * BLOCK_M + i] + B[bx * BLOCK_N + j]
    return C
