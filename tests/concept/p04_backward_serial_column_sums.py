"""Right numbers the wrong way: dB summed row by row in a serial loop per column, no T.reduce_sum."""

import tilelang
import tilelang.language as T

PUZZLE = "04"
KERNELS = "mul_relu_backward"
WANTS = "T.reduce_sum(..., dim=0)"


@tilelang.jit
def mul_relu_backward(A, B, dC, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    dC: T.Tensor((M, N), T.float16)
    dA = T.empty((M, N), T.float16)
    dB = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        sums = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(sums)
        for j in T.Parallel(BLOCK_N):
            col = bx * BLOCK_N + j
            if col < N:
                for row in T.serial(M):
                    a = T.cast(A[row, col], T.float32)
                    b = T.cast(B[col], T.float32)
                    grad = T.if_then_else(a * b > 0.0, T.cast(dC[row, col], T.float32), 0.0)
                    dA[row, col] = T.cast(grad * b, T.float16)
                    sums[j] += grad * a
                dB[col] = sums[j]
    return dA, dB
