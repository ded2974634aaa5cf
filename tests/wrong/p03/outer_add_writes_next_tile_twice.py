"""outer_add whose blocks also store a wrong value (0) into the first row of the tile below their own,
which that block stores again with the right value: every element of C is written by two blocks with
different values, and which store lands last depends on the order the GPU runs the blocks in. The
simulator runs blocks in grid order, where the right store lands last; its race watch names the two
blocks instead."""

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
        for j in T.Parallel(BLOCK_N):
            below = (by + 1) * BLOCK_M
            col = bx * BLOCK_N + j
            if below < M and col < N:
                C[below, col] = T.float16(0)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = by * BLOCK_M + i
            col = bx * BLOCK_N + j
            if row < M and col < N:
                C[row, col] = A[row] + B[col]
    return C
