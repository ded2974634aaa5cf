"""gemv adding the products element by element into a 2-D float32 accumulator across the K loop and
reducing it once at the end (the row_sum_tiled pattern), instead of one T.reduce_sum per K tile.
"""

KERNEL = "gemv"

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        a = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_fragment((BLOCK_K,), T.float16)
        partial = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        out = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(partial)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K], b)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                partial[i, j] += T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32)
        T.reduce_sum(partial, out, dim=1)
        T.copy(out, C[bx * BLOCK_M])
    return C
