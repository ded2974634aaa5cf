"""Right numbers the wrong way: add and mul_relu in plain serial loops, no T.Parallel."""

import tilelang
import tilelang.language as T

PUZZLE = "02"
KERNELS = "add,mul_relu"
WANTS = "T.Parallel(BLOCK)"


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.serial(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = A[bx * BLOCK + t] + B[bx * BLOCK + t]
    return C


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.serial(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = T.max(A[bx * BLOCK + t] * B[bx * BLOCK + t], 0)
    return C
