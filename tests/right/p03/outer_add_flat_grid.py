"""outer_add on a 1-D grid of ceildiv(M, BLOCK_M) * ceildiv(N, BLOCK_N) blocks, the tile's row and
column recovered with // and %, and the two guards nested.
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
    col_tiles = T.ceildiv(N, BLOCK_N)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * col_tiles, threads=THREADS) as b:
        tile_row = b // col_tiles
        tile_col = b % col_tiles
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = tile_row * BLOCK_M + i
            col = tile_col * BLOCK_N + j
            if row < M:
                if col < N:
                    C[row, col] = A[row] + B[col]
    return C
