"""Adversarial submission: `add` hangs (2^62 steps of a loop whose every step waits on the one before,
through C: centuries on a GPU even with C kept in registers, forever in the simulator); the next
kernel, `mul_relu`, is correct and must still be graded."""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        # Two nested loops: nvcc keeps C in registers across steps, and 2^31 steps alone end in seconds.
        for outer in T.serial(2147483647):
            for step in T.serial(2147483647):
                for t in T.Parallel(BLOCK):
                    if bx * BLOCK + t < N:
                        C[bx * BLOCK + t] = C[bx * BLOCK + t] * T.float16(0.5) + A[bx * BLOCK + t] + B[bx * BLOCK + t]
    return C


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = T.max(A[bx * BLOCK + t] * B[bx * BLOCK + t], 0)
    return C
