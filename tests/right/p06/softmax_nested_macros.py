"""softmax built from nested T.macros: a `normalise` macro calls `row_max_of` and `exp_and_sum`, each a
macro of its own, on the tile of scores; the tile's padding masked with T.if_then_else in the caller.
"""

KERNEL = "softmax"

import tilelang
import tilelang.language as T


@T.macro
def row_max_of(s, top):
    T.reduce_max(s, top, dim=1, clear=True)


@T.macro
def exp_and_sum(s, top, total, rows, cols):
    for i, j in T.Parallel(rows, cols):
        s[i, j] = T.exp(s[i, j] - top[i])
    T.reduce_sum(s, total, dim=1, clear=True)


@T.macro
def normalise(s, top, total, rows, cols):
    row_max_of(s, top)
    exp_and_sum(s, top, total, rows, cols)
    for i, j in T.Parallel(rows, cols):
        s[i, j] = s[i, j] / total[i]


@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        half = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        top = T.alloc_fragment((BLOCK_M,), T.float32)
        total = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], half)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            s[i, j] = T.if_then_else(j < N, T.cast(half[i, j], T.float32), -T.infinity(T.float32))
        normalise(s, top, total, BLOCK_M, BLOCK_N)
        T.copy(s, C[bx * BLOCK_M, 0])
    return C
