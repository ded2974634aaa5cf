"""gemv split along K as well as M: a first launch zeroes an fp32 workspace, then each block of a 2-D grid
sums its rows over four K tiles and adds the partial dot products into the workspace with T.atomic_add,
and a last launch converts the workspace to fp16 C.
"""

KERNEL = "gemv"

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
        T.clear(part)
        for t in T.serial(TILES_PER_SPLIT):
            T.copy(A[mb * BLOCK_M, ks * SPLIT + t * BLOCK_K], a)
            T.copy(B[ks * SPLIT + t * BLOCK_K], b)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                prod[i, j] = T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32)
            T.reduce_sum(prod, part, dim=1, clear=False)
        T.atomic_add(work[mb * BLOCK_M], part)

    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as ob:
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(work[ob * BLOCK_M], sums)
        T.copy(sums, C[ob * BLOCK_M])

    return C
