"""flash_attention_causal with the scores scaled once as they are masked (so every exponent is a plain
T.exp2 of a difference), the number of visible keys named before the loop and rounded up to tiles by hand, and
the mask written as the condition that hides a score.
"""

KERNEL = "flash_attention_causal"

import math

import tilelang
import tilelang.language as T


@tilelang.jit
def flash_attention_causal(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741 (O, the output, as in the formulas)

    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        scale = math.log2(math.e) / math.sqrt(D)  # exp(x / sqrt(D)) == exp2(x * scale)
        Q_tile = T.alloc_shared((BLOCK_M, D), T.float16)
        K_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        V_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        S = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        P = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        prev_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[head, bx * BLOCK_M, 0], Q_tile)
        T.clear(acc)
        T.clear(row_sum)
        T.fill(row_max, -T.infinity(T.float32))
        # the keys this block's queries may see end at its last query, or at N
        visible_keys = T.min(bx * BLOCK_M + BLOCK_M, N)
        for j in T.Pipelined((visible_keys + BLOCK_N - 1) // BLOCK_N, num_stages=STAGES):
            T.copy(K[head, j * BLOCK_N, 0], K_tile)
            T.clear(S)
            T.gemm(Q_tile, K_tile, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                hidden = j * BLOCK_N + c > bx * BLOCK_M + i or j * BLOCK_N + c >= N
                S[i, c] = T.if_then_else(hidden, -T.infinity(T.float32), S[i, c] * scale)

            T.copy(row_max, prev_max)
            T.reduce_max(S, row_max, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                correction[i] = T.exp2(prev_max[i] - row_max[i])
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                S[i, c] = T.exp2(S[i, c] - row_max[i])
            T.reduce_sum(S, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * correction[i] + tile_sum[i]
            for i, d in T.Parallel(BLOCK_M, D):
                acc[i, d] = acc[i, d] * correction[i]

            T.copy(S, P)
            T.copy(V[head, j * BLOCK_N, 0], V_tile)
            T.gemm(P, V_tile, acc, policy=T.GemmWarpPolicy.FullRow)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])

    return O
