"""softmax holding its scores transposed (BLOCK_N, BLOCK_M) and reducing down dim 0, but subtracting the
max as top[j], indexed by the loop's first variable (the column) instead of top[i] (the row): with loop
variables named (j, i) the two are easy to swap. The maxima fragment has BLOCK_M entries, so columns
past BLOCK_M read outside it."""

KERNEL = "softmax"
# Traced, it builds; TileLang 0.1.15's layout inference then finds no layout for `top` read both ways
# ("no available layout found"), so the CLI fails every case at compile, and the simulator names the
# out-of-bounds read.
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def softmax(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        rows = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        st = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        top = T.alloc_fragment((BLOCK_M,), T.float32)
        total = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], rows)
        for j, i in T.Parallel(BLOCK_N, BLOCK_M):
            st[j, i] = T.if_then_else(j < N, T.cast(rows[i, j], T.float32), -T.infinity(T.float32))
        T.reduce_max(st, top, dim=0)
        for j, i in T.Parallel(BLOCK_N, BLOCK_M):
            st[j, i] = T.exp(st[j, i] - top[j])
        T.reduce_sum(st, total, dim=0)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            rows[i, j] = T.cast(st[j, i] / total[i], T.float16)
        T.copy(rows, C[bx * BLOCK_M, 0])
    return C
