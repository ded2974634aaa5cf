"""row_sum that loads the block's rows into shared memory with T.copy (coalesced), then lets each
thread sum its own contiguous chunk of a row from the shared tile in a serial loop, and T.reduce_sum
adds the threads' partial sums.

Correct, but the shared-memory reads conflict: thread t reads tile[i, t * CHUNK + s], so at each step
neighbouring threads of a warp read addresses CHUNK * 2 bytes apart (32 bytes at the bench case's CHUNK
of 16, 8 of shared memory's 32 four-byte banks). Lanes 0, 4, 8, ... land in the same bank at different
addresses, and the warp's one read is replayed 8 times. The course's kernel keeps the tile in a
fragment (registers) and never reads it through shared memory.
"""

import tilelang
import tilelang.language as T

KERNEL = "row_sum"
CAUSE = "bank_conflicts"


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    CHUNK = (BLOCK_N + THREADS - 1) // THREADS  # columns of the tile each thread sums on its own

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        partial = T.alloc_fragment((BLOCK_M, THREADS), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], tile)  # zeros past the last row and column
        T.clear(partial)
        for i, t in T.Parallel(BLOCK_M, THREADS):
            for s in T.serial(CHUNK):
                if t * CHUNK + s < BLOCK_N:
                    partial[i, t] += T.cast(tile[i, t * CHUNK + s], T.float32)
        T.reduce_sum(partial, sums, dim=1)
        T.copy(sums, C[bx * BLOCK_M])
    return C
