"""mul_relu_forward copying B from index bx instead of bx * BLOCK_N: every column block but the
first is scaled by the wrong entries of B."""

KERNEL = "mul_relu_forward"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu_forward(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        B_tile = T.alloc_fragment((BLOCK_N,), T.float16)
        C_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M, bx * BLOCK_N], A_tile)
        T.copy(B[bx], B_tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            product = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            C_tile[i, j] = T.cast(T.max(product, 0.0), T.float16)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C
