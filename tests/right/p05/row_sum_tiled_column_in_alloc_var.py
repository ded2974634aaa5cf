"""row_sum_tiled walking the columns with a T.alloc_var cursor: the row offset is set once, the column
offset starts at 0 and grows by BLOCK_N after each tile. The column tiles are summed straight into
an fp32 (BLOCK_M, BLOCK_N) fragment through a casting T.copy.
"""

KERNEL = "row_sum_tiled"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        wide = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        running = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        out = T.alloc_fragment((BLOCK_M,), T.float32)
        row0 = T.alloc_var(T.int32)
        col = T.alloc_var(T.int32)
        row0 = bx * BLOCK_M
        col = 0
        T.clear(running)
        for _ in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[row0, col], wide)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                running[i, j] += wide[i, j]
            col = col + BLOCK_N
        T.reduce_sum(running, out, dim=1)
        T.copy(out, C[row0])
    return C
