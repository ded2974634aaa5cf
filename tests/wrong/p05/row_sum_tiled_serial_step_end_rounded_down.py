"""row_sum_tiled whose column loop steps over element offsets, T.serial(0, N // BLOCK_N * BLOCK_N,
BLOCK_N), its end rounded down to whole tiles: the columns of the last, partial tile are never added."""

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
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        this_tile = T.alloc_fragment((BLOCK_M,), T.float32)
        running = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(running)
        for col in T.serial(0, N // BLOCK_N * BLOCK_N, BLOCK_N):
            T.copy(A[bx * BLOCK_M, col], tile)
            T.copy(tile, wide)
            T.reduce_sum(wide, this_tile, dim=1)
            for i in T.Parallel(BLOCK_M):
                running[i] += this_tile[i]
        T.copy(running, C[bx * BLOCK_M])
    return C
