"""mul_relu_backward without T.clear: the first row tile reduces with clear=True (an `if k == 0`
branch) and later ones with clear=False, stored through a slice of dB.
"""

KERNEL = "mul_relu_backward"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu_backward(A, B, dC, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    dC: T.Tensor((M, N), T.float16)
    dA = T.empty((M, N), T.float16)
    dB = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        a_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        g_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        da_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        b_tile = T.alloc_fragment((BLOCK_N,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        db_tile = T.alloc_fragment((BLOCK_N,), T.float32)
        T.copy(B[bx * BLOCK_N], b_tile)
        for k in T.serial(T.ceildiv(M, BLOCK_M)):
            T.copy(A[k * BLOCK_M, bx * BLOCK_N], a_tile)
            T.copy(dC[k * BLOCK_M, bx * BLOCK_N], g_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                a = T.cast(a_tile[i, j], T.float32)
                b = T.cast(b_tile[j], T.float32)
                g = T.if_then_else(a * b > 0.0, T.cast(g_tile[i, j], T.float32), 0.0)
                da_tile[i, j] = T.cast(g * b, T.float16)
                products[i, j] = g * a
            T.copy(da_tile, dA[k * BLOCK_M, bx * BLOCK_N])
            if k == 0:
                T.reduce_sum(products, db_tile, dim=0, clear=True)
            else:
                T.reduce_sum(products, db_tile, dim=0, clear=False)
        T.copy(db_tile, dB[bx * BLOCK_N : (bx + 1) * BLOCK_N])
    return dA, dB
