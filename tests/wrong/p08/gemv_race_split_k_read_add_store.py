"""gemv split along K as well as M, each block adding its partial dot products into the fp32 workspace
by loading the workspace's slice, adding and storing it back, where it should use T.atomic_add. The
blocks that share a row tile run at once on a GPU and overwrite each other's sums."""

KERNEL = "gemv"
CAUGHT_BY = "gpu"
# One block at a time, as the simulator runs them, the sums add up: only its check for races between
# blocks (issue 25) fails this on the CPU.

import tilelang
import tilelang.language as T

TILES_PER_SPLIT = 4


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    SPLIT = TILES_PER_SPLIT * BLOCK_K
    work = T.alloc_global((M,), T.float32)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as zb:
        zeros = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(zeros)
        T.copy(zeros, work[zb * BLOCK_M])

    with T.Kernel(T.ceildiv(K, SPLIT), T.ceildiv(M, BLOCK_M), threads=THREADS) as (ks, mb):
        a = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_fragment((BLOCK_K,), T.float16)
        prod = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        total = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(part)
        for t in T.serial(TILES_PER_SPLIT):
            T.copy(A[mb * BLOCK_M, ks * SPLIT + t * BLOCK_K], a)
            T.copy(B[ks * SPLIT + t * BLOCK_K], b)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                prod[i, j] = T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32)
            T.reduce_sum(prod, part, dim=1, clear=False)
        T.copy(work[mb * BLOCK_M], total)
        for i in T.Parallel(BLOCK_M):
            total[i] = total[i] + part[i]
        T.copy(total, work[mb * BLOCK_M])

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as ob:
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(work[ob * BLOCK_M], sums)
        T.copy(sums, C[ob * BLOCK_M])

    return C
