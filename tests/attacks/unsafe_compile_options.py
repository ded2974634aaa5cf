"""Attack: nvcc flags that run another program as the compiler (-ccbin) and a pass config that smuggles
flags past the flag check."""

import tilelang
import tilelang.language as T


@tilelang.jit(compile_flags=["-ccbin=/tmp/not-a-compiler"])
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)
    return C


@tilelang.jit(pass_configs={"tl.device_compile_flags": "-ccbin=/tmp/not-a-compiler"})
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            C[by * BLOCK_M + i, bx * BLOCK_N + j] = T.float16(0)
    return C
