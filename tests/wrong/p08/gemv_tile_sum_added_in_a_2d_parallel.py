"""gemv adding each tile's row sums into acc inside a T.Parallel over the tile's rows and columns: the
update leaves the column out, so on the GPU each thread adds the sum once for every column it covers (the
simulator adds it once and its numbers come out right; grader.pipeline.checks.repeated_updates catches it).
A learner's kernel, held out from the corpora until 2026-12-05."""

KERNEL = "gemv"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 256):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel((M + BLOCK_M - 1) // BLOCK_M, threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_s = T.alloc_shared((BLOCK_K,), T.float16)
        prod = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        tsum = T.alloc_fragment((BLOCK_M,), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial((K + BLOCK_K - 1) // BLOCK_K):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_s)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                prod[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_s[j], T.float32)
            T.reduce_sum(prod, tsum, dim=1)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):  # noqa: B007  (the bug: the update leaves j out)
                acc[i] = acc[i] + tsum[i]
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.cast(acc[i], T.float16)
    return C
