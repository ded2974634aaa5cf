"""outer_add visiting the tile one row at a time (T.serial over BLOCK_M rows, T.Parallel over the
BLOCK_N columns), adding in float32 and casting once.
"""

KERNEL = "outer_add"

import tilelang
import tilelang.language as T


@tilelang.jit
def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i in T.serial(BLOCK_M):
            for j in T.Parallel(BLOCK_N):
                row = by * BLOCK_M + i
                col = bx * BLOCK_N + j
                if row < M and col < N:
                    C[row, col] = T.cast(T.cast(A[row], T.float32) + T.cast(B[col], T.float32), T.float16)
    return C
