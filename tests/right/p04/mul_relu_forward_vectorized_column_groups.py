"""mul_relu_forward indexing global memory by hand: T.Parallel over the tile's rows and column groups,
T.vectorized over 4 columns a group, a guard on both edges, and ReLU as T.max of the fp32 product.
"""

KERNEL = "mul_relu_forward"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu_forward(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i, g in T.Parallel(BLOCK_M, BLOCK_N // 4):
            for v in T.vectorized(4):
                row = by * BLOCK_M + i
                col = bx * BLOCK_N + g * 4 + v
                if row < M and col < N:
                    product = T.cast(A[row, col], T.float32) * T.cast(B[col], T.float32)
                    C[row, col] = T.cast(T.max(product, T.float32(0)), T.float16)
    return C
