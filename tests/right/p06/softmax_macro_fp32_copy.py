"""softmax copying A straight into a float32 fragment (T.copy converts), the padding mask and the
normalization in T.macro helpers, the max taken over the unscaled values with log2(e) applied
inside the exponent, and the reciprocal kept in a separate fragment.
"""

KERNEL = "softmax"

import math

import tilelang
import tilelang.language as T

LOG2E = math.log2(math.e)


@T.macro
def mask_columns(x, first_col, n_cols):
    for i, j in T.Parallel(x.shape[0], x.shape[1]):
        if first_col + j >= n_cols:
            x[i, j] = -T.infinity(T.float32)


@T.macro
def scale_rows(x, factor):
    for i, j in T.Parallel(x.shape[0], x.shape[1]):
        x[i, j] = x[i, j] * factor[i]


@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        inverse = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], x)
        mask_columns(x, 0, N)
        T.reduce_max(x, row_max, dim=1)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            x[i, j] = T.exp2((x[i, j] - row_max[i]) * LOG2E)
        T.reduce_sum(x, row_sum, dim=1)
        for i in T.Parallel(BLOCK_M):
            inverse[i] = 1.0 / row_sum[i]
        scale_rows(x, inverse)
        T.copy(x, C[bx * BLOCK_M, 0])
    return C
