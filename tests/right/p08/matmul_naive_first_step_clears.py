"""matmul_naive without T.clear: the first K step multiplies with clear_accum=True (an `if k == 0`
branch) and the later steps accumulate; the result goes to C through a shared-memory tile.
"""

KERNEL = "matmul_naive"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_fragment((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        c_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], b)
            if k == 0:
                T.gemm(a, b, acc, clear_accum=True)
            else:
                T.gemm(a, b, acc)
        T.copy(acc, c_tile)
        T.copy(c_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C
