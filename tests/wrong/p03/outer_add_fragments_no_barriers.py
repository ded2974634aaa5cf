"""outer_add_fragments staging B's slice through shared memory, with TileLang's barriers turned off
(pass config tl.disable_thread_storage_sync): each thread stores one element of the shared tile and then
reads the others' elements, with no __syncthreads between, so on the GPU a read can come before the
store it needs (a race, most visible where a warp reads what another warp writes)."""

KERNEL = "outer_add_fragments"
CAUGHT_BY = "gpu"
SIMULATOR_MISSES = "each statement runs for the whole block at once: no race shows; the judge refuses the config"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={"tl.disable_thread_storage_sync": True})
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_fragment((BLOCK_M,), T.float16)
        b = T.alloc_shared((BLOCK_N,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M], a)
        for j in T.Parallel(BLOCK_N):
            b[BLOCK_N - 1 - j] = B[bx * BLOCK_N + BLOCK_N - 1 - j]
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            c[i, j] = a[i] + b[j]
        T.copy(c, C[by * BLOCK_M, bx * BLOCK_N])
    return C
