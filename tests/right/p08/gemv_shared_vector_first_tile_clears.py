"""gemv with the A tile and the slice of B in shared memory, the first K tile reducing with
clear=True (an `if k == 0` branch, no T.clear) and the others with clear=False; the sums stored
through a slice of C.
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
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K], b)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32)
            if k == 0:
                T.reduce_sum(products, acc, dim=1, clear=True)
            else:
                T.reduce_sum(products, acc, dim=1, clear=False)
        T.copy(acc, C[bx * BLOCK_M : (bx + 1) * BLOCK_M])
    return C
