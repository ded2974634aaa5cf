"""row_sum where each thread sums its own contiguous chunk of a row in a serial loop, the way one
splits an array between CPU threads, and T.reduce_sum then adds the threads' partial sums.

Correct, but uncoalesced: thread t reads columns t * CHUNK, t * CHUNK + 1, ..., so at each step the
32 threads of a warp read 2-byte values CHUNK * 2 bytes apart (32 bytes at the bench case's CHUNK of
16): every thread gets a 32-byte sector of its own and uses 2 bytes of it. The course's kernel loads
the tile with T.copy, where neighbouring threads read neighbouring 16-byte vectors.
"""

import tilelang
import tilelang.language as T

KERNEL = "row_sum"
CAUSE = "uncoalesced"


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    CHUNK = (N + THREADS - 1) // THREADS  # columns each thread sums on its own

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        partial = T.alloc_fragment((BLOCK_M, THREADS), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(partial)
        for i, t in T.Parallel(BLOCK_M, THREADS):
            for s in T.serial(CHUNK):
                row = bx * BLOCK_M + i
                col = t * CHUNK + s
                if row < M and col < N:
                    partial[i, t] += T.cast(A[row, col], T.float32)
        T.reduce_sum(partial, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M])
    return C
