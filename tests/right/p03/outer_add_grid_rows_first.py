"""outer_add with the grid axes swapped: the first grid axis counts row tiles and the second column
tiles (T.Kernel(ceildiv(M, BLOCK_M), ceildiv(N, BLOCK_N)) as (bm, bn)), every offset following.
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
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = bm * BLOCK_M + i
            col = bn * BLOCK_N + j
            if row < M and col < N:
                C[row, col] = A[row] + B[col]
    return C
