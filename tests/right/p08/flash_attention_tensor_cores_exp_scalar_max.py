"""flash_attention_tensor_cores with T.exp on scores scaled by 1 / sqrt(D) (no T.exp2), each tile's maxima
reduced into their own fragment (clear=True), and the running max updated in T.Parallel through
scalar temporaries (m_old = row_max[i]; m_new = T.max(m_old, tile_max[i])), the correction
computed from them before row_max is overwritten.
"""

KERNEL = "flash_attention_tensor_cores"

import math

import tilelang
import tilelang.language as T


@tilelang.jit
def flash_attention_tensor_cores(Q, K, V, BLOCK_M: int, BLOCK_N: int, STAGES: int = 1, THREADS: int = 128):
    H, M, N, D = T.const("H, M, N, D")
    Q: T.Tensor((H, M, D), T.float16)
    K: T.Tensor((H, N, D), T.float16)
    V: T.Tensor((H, N, D), T.float16)
    O = T.empty((H, M, D), T.float16)  # noqa: E741
    with T.Kernel(T.ceildiv(M, BLOCK_M), H, threads=THREADS) as (bx, head):
        inv_sqrt_d = 1.0 / math.sqrt(D)
        q = T.alloc_shared((BLOCK_M, D), T.float16)
        k_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        v_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        p = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        row_max = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_max = T.alloc_fragment((BLOCK_M,), T.float32)
        correction = T.alloc_fragment((BLOCK_M,), T.float32)
        tile_sum = T.alloc_fragment((BLOCK_M,), T.float32)
        row_sum = T.alloc_fragment((BLOCK_M,), T.float32)

        T.copy(Q[head, bx * BLOCK_M, 0], q)
        T.clear(acc)
        T.clear(row_sum)
        T.fill(row_max, -T.infinity(T.float32))
        for j in T.Pipelined(T.ceildiv(N, BLOCK_N), num_stages=STAGES):
            T.copy(K[head, j * BLOCK_N, 0], k_tile)
            T.clear(s)
            T.gemm(q, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.if_then_else(j * BLOCK_N + c < N, s[i, c] * inv_sqrt_d, -T.infinity(T.float32))
            T.reduce_max(s, tile_max, dim=1)
            for i in T.Parallel(BLOCK_M):
                m_old = row_max[i]
                m_new = T.max(m_old, tile_max[i])
                correction[i] = T.exp(m_old - m_new)
                row_max[i] = m_new
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.exp(s[i, c] - row_max[i])
            T.reduce_sum(s, tile_sum, dim=1)
            for i in T.Parallel(BLOCK_M):
                row_sum[i] = row_sum[i] * correction[i] + tile_sum[i]
            for i, d in T.Parallel(BLOCK_M, D):
                acc[i, d] = acc[i, d] * correction[i]
            T.copy(s, p)
            T.copy(V[head, j * BLOCK_N, 0], v_tile)
            T.gemm(p, v_tile, acc, policy=T.GemmWarpPolicy.FullRow)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / row_sum[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])
    return O
