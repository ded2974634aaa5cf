"""Right numbers the wrong way: the CUDA-core rung written with T.gemm on fragment tiles (a fixed
K step of 32), which is the next rung's lesson."""

import tilelang
import tilelang.language as T

PUZZLE = "08"
KERNELS = "matmul_cuda_cores"
WANTS = "without T.gemm"


@tilelang.jit
def matmul_cuda_cores(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_fragment((BLOCK_M, 32), T.float16)
        B_tile = T.alloc_fragment((32, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, 32)):
            T.copy(A[by * BLOCK_M, k * 32], A_tile)
            T.copy(B[k * 32, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
