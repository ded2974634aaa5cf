"""Right numbers the wrong way: each row's dot product summed by a serial loop, no tile reduction."""

import tilelang
import tilelang.language as T

PUZZLE = "08"
KERNELS = "gemv"
WANTS = "T.reduce_sum"


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                for k in T.serial(K):
                    acc[i] += T.cast(A[bx * BLOCK_M + i, k], T.float32) * T.cast(B[k], T.float32)
                C[bx * BLOCK_M + i] = T.cast(acc[i], T.float16)
    return C
