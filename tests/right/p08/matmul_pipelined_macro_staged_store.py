"""matmul_pipelined with the K step (two copies and the gemm) in a T.macro, and the accumulator
converted into an fp16 fragment in T.Parallel, then stored through a shared-memory tile.
"""

KERNEL = "matmul_pipelined"

import tilelang
import tilelang.language as T


@T.macro
def k_step(A, B, a, b, acc, row0, col0, k0):
    T.copy(A[row0, k0], a)
    T.copy(B[k0, col0], b)
    T.gemm(a, b, acc)


@tilelang.jit
def matmul_pipelined(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        half = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        c_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            k_step(A, B, a, b, acc, by * BLOCK_M, bx * BLOCK_N, k * BLOCK_K)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            half[i, j] = T.cast(acc[i, j], T.float16)
        T.copy(half, c_tile)
        T.copy(c_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C
