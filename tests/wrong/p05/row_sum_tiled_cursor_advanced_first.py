"""row_sum_tiled with a T.alloc_var column cursor that is moved on before the tile is read instead of
after: every row skips its first BLOCK_N columns and reads one tile of zeros past the end."""

KERNEL = "row_sum_tiled"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        running = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        out = T.alloc_fragment((BLOCK_M,), T.float32)
        col = T.alloc_var(T.int32)
        col = 0
        T.clear(running)
        for _ in T.serial(T.ceildiv(N, BLOCK_N)):
            col = col + BLOCK_N
            T.copy(A[bx * BLOCK_M, col], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                running[i, j] += T.cast(tile[i, j], T.float32)
        T.reduce_sum(running, out, dim=1)
        T.copy(out, C[bx * BLOCK_M])
    return C
