"""mul_relu_forward with B's slice in shared memory, A's tile in shared memory too, and the result in
a float32 fragment that the final T.copy converts to fp16 (one rounding).
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
        a = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        b = T.alloc_shared((BLOCK_N,), T.float16)
        out = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(A[by * BLOCK_M, bx * BLOCK_N], a)
        T.copy(B[bx * BLOCK_N], b)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            out[i, j] = T.max(T.cast(a[i, j], T.float32) * T.cast(b[j], T.float32), 0.0)
        T.copy(out, C[by * BLOCK_M, bx * BLOCK_N])
    return C
