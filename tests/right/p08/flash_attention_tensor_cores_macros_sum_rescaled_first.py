"""flash_attention_tensor_cores written with T.macro helpers (the masked score tile, the rescale of the running
state); the running sum is multiplied by the correction first and the tile's exponentials then
added by T.reduce_sum(..., clear=False) instead of through a per-tile sum; the scores' product
clears itself (clear_accum=True).
"""

KERNEL = "flash_attention_tensor_cores"

import math

import tilelang
import tilelang.language as T


@T.macro
def score_tile(K, q, k_tile, s, head, first_key, n_keys):
    T.copy(K[head, first_key, 0], k_tile)
    T.gemm(q, k_tile, s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
    for i, c in T.Parallel(s.shape[0], s.shape[1]):
        s[i, c] = T.if_then_else(first_key + c < n_keys, s[i, c], -T.infinity(T.float32))


@T.macro
def rescale(acc, row_sum, correction):
    for i in T.Parallel(acc.shape[0]):
        row_sum[i] = row_sum[i] * correction[i]
    for i, d in T.Parallel(acc.shape[0], acc.shape[1]):
        acc[i, d] = acc[i, d] * correction[i]


@tilelang.jit
def flash_attention_tensor_cores(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741
    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        scale = math.log2(math.e) / math.sqrt(D)
        q = T.alloc_shared((BLOCK_M, D), T.float16)
        k_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        v_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        p = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[head, bx * BLOCK_M, 0], q)
        T.fill(acc, 0.0)
        T.fill(row_sum, 0.0)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.Pipelined(T.ceildiv(N, BLOCK_N), num_stages=STAGES):
            score_tile(K, q, k_tile, s, head, j * BLOCK_N, N)
            T.copy(row_max, prev_max)
            T.reduce_max(s, row_max, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                correction[i] = T.exp2(prev_max[i] * scale - row_max[i] * scale)
            rescale(acc, row_sum, correction)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.exp2(s[i, c] * scale - row_max[i] * scale)
            T.reduce_sum(s, row_sum, dim=1, clear=False)
            T.copy(s, p)
            T.copy(V[head, j * BLOCK_N, 0], v_tile)
            T.gemm(p, v_tile, acc, policy=T.GemmWarpPolicy.FullRow)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])
    return O
