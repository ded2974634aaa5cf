"""outer_add on a 1-D grid whose block index is split with the wrong count: row = b // row_tiles and
column = b % row_tiles, where the row-major split divides by the number of column tiles. Right only
when the grid is square in tiles; otherwise some tiles are written twice and others never."""

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
    row_tiles = T.ceildiv(M, BLOCK_M)
    col_tiles = T.ceildiv(N, BLOCK_N)
    with T.Kernel(row_tiles * col_tiles, threads=THREADS) as b:
        tr = b // row_tiles
        tc = b % row_tiles
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            r = tr * BLOCK_M + i
            c = tc * BLOCK_N + j
            if r < M and c < N:
                C[r, c] = A[r] + B[c]
    return C
