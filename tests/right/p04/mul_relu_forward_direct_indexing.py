"""mul_relu_forward reading A and B straight from global memory and writing C in the T.Parallel
loop, guarded on both the row and the column, instead of T.copy through fragments.
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
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            row = by * BLOCK_M + i
            col = bx * BLOCK_N + j
            if row < M and col < N:
                product = T.cast(A[row, col], T.float32) * T.cast(B[col], T.float32)
                C[row, col] = T.cast(T.max(product, 0.0), T.float16)
    return C
