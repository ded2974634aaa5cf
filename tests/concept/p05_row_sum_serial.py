"""Right numbers the wrong way: each row summed by a serial loop over its columns, no T.reduce_sum."""

import tilelang
import tilelang.language as T

PUZZLE = "05"
KERNELS = "row_sum,row_sum_tiled"
WANTS = "T.reduce_sum"


@tilelang.jit
def row_sum(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(sums)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                for j in T.serial(N):
                    sums[i] += T.cast(A[bx * BLOCK_M + i, j], T.float32)
                C[bx * BLOCK_M + i] = sums[i]
    return C


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(sums)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                for j in T.serial(N):
                    sums[i] += T.cast(A[bx * BLOCK_M + i, j], T.float32)
                C[bx * BLOCK_M + i] = sums[i]
    return C
