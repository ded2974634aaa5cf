"""mul_relu_backward writing dA straight to global memory from the T.Parallel loop (guarded on row
and column), with the ReLU mask in a Python helper function, and B read from global memory.
The column sums still go through a float32 accumulator and one T.reduce_sum.
"""

KERNEL = "mul_relu_backward"

import tilelang
import tilelang.language as T


def upstream_through_relu(a, b, g):
    """The gradient that passes the ReLU at a * b (0 where the product is not positive)."""
    return T.if_then_else(a * b > 0.0, g, 0.0)


@tilelang.jit
def mul_relu_backward(A, B, dC, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    dC: T.Tensor((M, N), T.float16)
    dA = T.empty((M, N), T.float16)
    dB = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_N,), T.float32)
        T.fill(acc, 0.0)
        for k in T.serial(T.ceildiv(M, BLOCK_M)):
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                row = k * BLOCK_M + i
                col = bx * BLOCK_N + j
                if row < M and col < N:
                    a = T.cast(A[row, col], T.float32)
                    b = T.cast(B[col], T.float32)
                    g = upstream_through_relu(a, b, T.cast(dC[row, col], T.float32))
                    dA[row, col] = T.cast(g * b, T.float16)
                    acc[i, j] += g * a
        T.reduce_sum(acc, sums, dim=0)
        T.copy(sums, dB[bx * BLOCK_N])
    return dA, dB
