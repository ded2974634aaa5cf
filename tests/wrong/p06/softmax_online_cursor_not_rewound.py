"""softmax_online whose second pass starts its T.alloc_var column cursor where the first pass left it,
past the row's end: every tile of the second pass lies outside A and C, so T.copy reads zeros and drops
every store, and C keeps whatever its memory held."""

KERNEL = "softmax_online"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T

LOG2E = 1.4426950408889634


@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        run_max = T.alloc_fragment((BLOCK_M,), T.float32)
        old_max = T.alloc_fragment((BLOCK_M,), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        run_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        inv = T.alloc_fragment((BLOCK_M,), T.float32)
        row = T.alloc_var(T.int32)
        col = T.alloc_var(T.int32)
        row = bx * BLOCK_M
        T.fill(run_max, -T.infinity(T.float32))
        T.fill(run_sum, 0.0)
        col = 0
        for _ in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[row, col], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, j] = T.if_then_else(col + j < N, T.cast(tile[i, j], T.float32) * LOG2E, -T.infinity(T.float32))
            T.copy(run_max, old_max)
            T.reduce_max(s, run_max, dim=1, clear=False)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, j] = T.exp2(s[i, j] - run_max[i])
            T.reduce_sum(s, part, dim=1)
            for i in T.Parallel(BLOCK_M):
                run_sum[i] = run_sum[i] * T.exp2(old_max[i] - run_max[i]) + part[i]
            col = col + BLOCK_N
        for i in T.Parallel(BLOCK_M):
            inv[i] = 1.0 / run_sum[i]
        for _ in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[row, col], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                tile[i, j] = T.cast(T.exp2(T.cast(tile[i, j], T.float32) * LOG2E - run_max[i]) * inv[i], T.float16)
            T.copy(tile, C[row, col])
            col = col + BLOCK_N
    return C
