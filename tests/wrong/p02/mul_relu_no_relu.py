"""mul_relu that forgets the ReLU: the negative products (about half of them) are stored as they are."""

KERNEL = "mul_relu"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            i = bx * BLOCK + t
            if i < N:
                C[i] = A[i] * B[i]
    return C
