"""gemv that lays its products out transposed, K down and rows across (BLOCK_K, BLOCK_M), loads the A tile
into shared memory, and sums down dim 0 with T.reduce_sum(..., dim=0, clear=False) into the fp32
accumulator after each K tile.
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
        a_s = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b_s = T.alloc_shared((BLOCK_K,), T.float16)
        prod_t = T.alloc_fragment((BLOCK_K, BLOCK_M), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for kt in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, kt * BLOCK_K], a_s)
            T.copy(B[kt * BLOCK_K], b_s)
            for kk, m in T.Parallel(BLOCK_K, BLOCK_M):
                prod_t[kk, m] = T.cast(a_s[m, kk], T.float32) * T.cast(b_s[kk], T.float32)
            T.reduce_sum(prod_t, acc, dim=0, clear=False)
        T.copy(acc, C[bx * BLOCK_M])
    return C
