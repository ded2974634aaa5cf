"""row_sum_tiled with a T.macro that loads a column tile, and the first tile peeled off to initialize
the accumulator (copied straight into the float32 accumulator, no T.clear); the rest are added in a
loop that starts at 1, and the sums are stored through a slice of C.

(An earlier form initialized the accumulator with the same `partial = cast(tile)` T.Parallel loop
that the K loop uses: TileLang 0.1.15 then reuses the first tile's loaded registers inside the loop
(a common subexpression kept across the loop's new loads) when the tiles need no bounds check, so
square_256 came out wrong on the H200 while the simulator passed it.)
"""

KERNEL = "row_sum_tiled"

import tilelang
import tilelang.language as T


@T.macro
def load_tile(A, tile, row0, col0):
    T.copy(A[row0, col0], tile)


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        partial = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        load_tile(A, partial, bx * BLOCK_M, 0)
        for k in T.serial(1, T.ceildiv(N, BLOCK_N)):
            load_tile(A, tile, bx * BLOCK_M, k * BLOCK_N)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                partial[i, j] = partial[i, j] + T.cast(tile[i, j], T.float32)
        T.reduce_sum(partial, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M : (bx + 1) * BLOCK_M])
    return C
