"""outer_add whose 2-D T.Parallel visits each row of the tile with its columns rotated by the row number,
j -> (j + i) % BLOCK_N, a swizzle some learners use to spread the stores: every element is still written
exactly once, by the iteration that computes its column.
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
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            r = by * BLOCK_M + i
            c = bx * BLOCK_N + (j + i) % BLOCK_N
            if r < M and c < N:
                C[r, c] = A[r] + B[c]
    return C
