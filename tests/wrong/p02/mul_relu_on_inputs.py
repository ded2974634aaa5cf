"""mul_relu applying the ReLU to each input before multiplying: two negatives give a positive product,
which this kernel zeroes.
"""

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
                C[i] = T.max(A[i], 0) * T.max(B[i], 0)
    return C
