"""row_sum by a Hillis-Steele scan in shared memory, each step one T.Parallel statement that reads the element d
to its left and writes its own, with no barrier or second buffer between the read and the write: a lane may read
a neighbour another lane already updated this step. TileLang splits each step among the threads in chunks, a barrier
between chunks: the second chunk of a row reads the first chunk's new values. On an H100 every element was wrong,
the same in three runs (docs/results/data/h100-2026-12-05-sixth/probes/); the simulator, which read every lane
before writing any, had called the numbers right. It now fails the case on the race
(grader/pipeline/simulate/lane_races.py). Its concept check fails it too (no T.reduce_sum)."""

KERNEL = "row_sum"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        s = T.alloc_shared((BLOCK_M, BLOCK_N), T.float32)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            s[i, j] = T.if_then_else(
                bx * BLOCK_M + i < M and j < N, T.cast(A[bx * BLOCK_M + i, j], T.float32), T.float32(0)
            )
        for step in T.serial(BLOCK_N.bit_length() - 1):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                if j >= (1 << step):
                    s[i, j] = s[i, j] + s[i, j - (1 << step)]
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = s[i, BLOCK_N - 1]
    return C
