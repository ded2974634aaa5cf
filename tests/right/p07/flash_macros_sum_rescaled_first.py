"""flash_attention written with T.macro helpers (the masked score tile, the rescale of the running
state); the running sum is multiplied by the correction first and the tile's exponentials then
added by T.reduce_sum(..., clear=False) instead of through a per-tile sum; the scores' product
cleared in the macro before the multiply-adds; P rounded to fp16 in shared memory.
"""

KERNEL = "flash_attention"

import math

import tilelang
import tilelang.language as T


@T.macro
def score_tile(K, q, k_tile, s, first_key, n_keys):
    T.copy(K[first_key, 0], k_tile)
    T.clear(s)
    for d in T.serial(q.shape[1]):  # the head size, read from the tile's shape
        for i, c in T.Parallel(s.shape[0], s.shape[1]):
            s[i, c] += T.cast(q[i, d], T.float32) * T.cast(k_tile[c, d], T.float32)
    for i, c in T.Parallel(s.shape[0], s.shape[1]):
        s[i, c] = T.if_then_else(first_key + c < n_keys, s[i, c], -T.infinity(T.float32))


@T.macro
def rescale(acc, row_sum, correction):
    for i in T.Parallel(acc.shape[0]):
        row_sum[i] = row_sum[i] * correction[i]
    for i, d in T.Parallel(acc.shape[0], acc.shape[1]):
        acc[i, d] = acc[i, d] * correction[i]


@tilelang.jit
def flash_attention(Q, K, V, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        scale = math.log2(math.e) / math.sqrt(D)
        q = T.alloc_shared((BLOCK_M, D), T.float16)
        k_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        v_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        p = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[bx * BLOCK_M, 0], q)
        T.fill(acc, 0.0)
        T.fill(row_sum, 0.0)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            score_tile(K, q, k_tile, s, j * BLOCK_N, N)
            T.copy(row_max, prev_max)
            T.reduce_max(s, row_max, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                correction[i] = T.exp2(prev_max[i] * scale - row_max[i] * scale)
            rescale(acc, row_sum, correction)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.exp2(s[i, c] * scale - row_max[i] * scale)
            T.reduce_sum(s, row_sum, dim=1, clear=False)
            T.copy(s, p)
            T.copy(V[j * BLOCK_N, 0], v_tile)
            for c in T.serial(BLOCK_N):
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] += T.cast(p[i, c], T.float32) * T.cast(v_tile[c, d], T.float32)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[bx * BLOCK_M, 0])
    return O
