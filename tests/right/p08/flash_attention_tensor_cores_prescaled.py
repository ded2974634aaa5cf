"""flash_attention_tensor_cores multiplying the scores by log2(e) / sqrt(D) once, right after the product, so the
running max is kept on the scaled scores and every exponent is a plain T.exp2(x - m); V loaded
before the exponentials; the output divided by the sum through its reciprocal.
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
        scale = math.log2(math.e) / math.sqrt(D)
        q = T.alloc_shared((BLOCK_M, D), T.float16)
        k_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        v_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        p = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        m = T.alloc_fragment((BLOCK_M,), T.float32)
        m_prev = T.alloc_fragment((BLOCK_M,), T.float32)
        alpha = T.alloc_fragment((BLOCK_M,), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        l = T.alloc_fragment((BLOCK_M,), T.float32)  # noqa: E741

        T.copy(Q[head, bx * BLOCK_M, 0], q)
        T.clear(acc)
        T.clear(l)
        T.fill(m, -T.infinity(T.float32))
        for j in T.Pipelined(T.ceildiv(N, BLOCK_N), num_stages=STAGES):
            T.copy(K[head, j * BLOCK_N, 0], k_tile)
            T.copy(V[head, j * BLOCK_N, 0], v_tile)
            T.clear(s)
            T.gemm(q, k_tile, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.if_then_else(j * BLOCK_N + c < N, s[i, c] * scale, -T.infinity(T.float32))
            T.copy(m, m_prev)
            T.reduce_max(s, m, dim=1, clear=False)
            for i in T.Parallel(BLOCK_M):
                alpha[i] = T.exp2(m_prev[i] - m[i])
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.exp2(s[i, c] - m[i])
            T.reduce_sum(s, part, dim=1)
            for i in T.Parallel(BLOCK_M):
                l[i] = l[i] * alpha[i] + part[i]
            for i, d in T.Parallel(BLOCK_M, D):
                acc[i, d] = acc[i, d] * alpha[i]
            T.copy(s, p)
            T.gemm(p, v_tile, acc, policy=T.GemmWarpPolicy.FullRow)

        for i in T.Parallel(BLOCK_M):
            l[i] = 1.0 / l[i]
        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] * l[i]
        T.copy(acc, O[head, bx * BLOCK_M, 0])
    return O
