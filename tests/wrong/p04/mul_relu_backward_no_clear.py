"""mul_relu_backward that forgets T.clear on the dB accumulator before the row loop: the products
are added to whatever its registers held."""

KERNEL = "mul_relu_backward"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def mul_relu_backward(A, B, dC, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    B: T.Tensor((N,), T.float16)
    dC: T.Tensor((M, N), T.float16)
    dA = T.empty((M, N), T.float16)
    dB = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, BLOCK_N), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        dC_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        dA_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        B_tile = T.alloc_fragment((BLOCK_N,), T.float16)
        partial = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        dB_tile = T.alloc_fragment((BLOCK_N,), T.float32)
        T.copy(B[bx * BLOCK_N], B_tile)
        for k in T.serial(T.ceildiv(M, BLOCK_M)):
            T.copy(A[k * BLOCK_M, bx * BLOCK_N], A_tile)
            T.copy(dC[k * BLOCK_M, bx * BLOCK_N], dC_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                a = T.cast(A_tile[i, j], T.float32)
                b = T.cast(B_tile[j], T.float32)
                grad = T.if_then_else(a * b > 0.0, T.cast(dC_tile[i, j], T.float32), 0.0)
                dA_tile[i, j] = T.cast(grad * b, T.float16)
                partial[i, j] += grad * a
            T.copy(dA_tile, dA[k * BLOCK_M, bx * BLOCK_N])
        T.reduce_sum(partial, dB_tile, dim=0)
        T.copy(dB_tile, dB[bx * BLOCK_N])
    return dA, dB
