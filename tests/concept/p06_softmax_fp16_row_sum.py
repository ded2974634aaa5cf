"""Right numbers the wrong way: softmax reducing each row's exponentials into a float16 sum. On the rows the
CPU simulates (at most 256 wide) the rounding stays inside the fp16 tolerance; on wide_300x8000 it does not,
and only a GPU runs that case. So the TIR says it, on every case and every device."""

import math

import tilelang
import tilelang.language as T

PUZZLE = "06"
KERNELS = "softmax"
WANTS = "every sum of exponentials kept in float32"
INSTEAD = "row_sum"

LOG2E = math.log2(math.e)


@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        e = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float16)
        T.copy(A[bx * BLOCK_M, 0], tile)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.if_then_else(j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            e[i, j] = T.cast(T.exp2(x[i, j] - row_max[i]), T.float16)
        T.reduce_sum(e, row_sum, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            tile[i, j] = T.cast(T.cast(e[i, j], T.float32) / T.cast(row_sum[i], T.float32), T.float16)
        T.copy(tile, C[bx * BLOCK_M, 0])
    return C
