"""outer_add that rotates the column it stores to, (j + i) % BLOCK_N, but reads B at the unrotated column
j: each row of the tile gets B shifted by the row number. Row 0 of every tile is right, which is what a
quick look at the first few outputs shows."""

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
            r = by * BLOCK_M + i
            c_store = bx * BLOCK_N + (j + i) % BLOCK_N
            c_read = bx * BLOCK_N + j
            if r < M and c_store < N and c_read < N:
                C[r, c_store] = A[r] + B[c_read]
    return C
