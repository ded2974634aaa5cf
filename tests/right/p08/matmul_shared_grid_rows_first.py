"""matmul_shared with the grid axes swapped: the first grid axis counts row tiles of C."""

KERNEL = "matmul_shared"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bm * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K, bn * BLOCK_N], b)
            T.gemm(a, b, acc)
        T.copy(acc, C[bm * BLOCK_M, bn * BLOCK_N])
    return C
