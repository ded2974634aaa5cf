"""outer_add_fragments on a 1-D grid walked column-major: block b takes tile row b % row_tiles and tile
column b // row_tiles, so consecutive blocks go down a column of tiles and share their slice of B.
"""

KERNEL = "outer_add_fragments"

import tilelang
import tilelang.language as T


@tilelang.jit
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    row_tiles = T.ceildiv(M, BLOCK_M)
    with T.Kernel(row_tiles * T.ceildiv(N, BLOCK_N), threads=THREADS) as b:
        r0 = (b % row_tiles) * BLOCK_M
        c0 = (b // row_tiles) * BLOCK_N
        a_part = T.alloc_fragment((BLOCK_M,), T.float16)
        b_part = T.alloc_fragment((BLOCK_N,), T.float16)
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[r0 : r0 + BLOCK_M], a_part)
        T.copy(B[c0 : c0 + BLOCK_N], b_part)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            tile[i, j] = a_part[i] + b_part[j]
        T.copy(tile, C[r0 : r0 + BLOCK_M, c0 : c0 + BLOCK_N])
    return C
