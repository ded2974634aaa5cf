"""outer_add on a 1-D grid: one block per BLOCK_N columns, walking down all of C's rows BLOCK_M at a time
in a serial loop, instead of one block per BLOCK_M x BLOCK_N tile.

Correct, but too few blocks: at the bench case (16384 x 16384, BLOCK_N = 256) the grid has 64 blocks,
fewer than half of the H200's 132 SMs, so most SMs have nothing to do while each of the 64 writes a
strip of 8 MiB. The course's kernel launches 64 x 512 blocks.
"""

import tilelang
import tilelang.language as T

KERNEL = "outer_add"
CAUSE = "parallelism"


@tilelang.jit
def outer_add(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        for by in T.serial(T.ceildiv(M, BLOCK_M)):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                row = by * BLOCK_M + i
                col = bx * BLOCK_N + j
                if row < M and col < N:
                    C[row, col] = A[row] + B[col]
    return C
