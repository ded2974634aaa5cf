"""gemv whose grid rounds down: the last partial block of rows is never computed."""

KERNEL = "gemv"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(M // BLOCK_M, threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        T.copy(acc, C[bx * BLOCK_M])
    return C
