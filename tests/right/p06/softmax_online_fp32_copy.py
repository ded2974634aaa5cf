"""softmax_online with the tiles copied straight into a float32 fragment (T.copy converts), the
exponent scaled inside exp2 ((x - m) * log2(e), the max taken over unscaled values), and the
padding masked by an `if` store in T.Parallel; the second pass writes exp(x - m) * (1 / l) from
that fp32 fragment.
"""

KERNEL = "softmax_online"

import math

import tilelang
import tilelang.language as T

LOG2E = math.log2(math.e)


@tilelang.jit
def softmax_online(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        x = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        m = T.alloc_fragment((BLOCK_M,), T.float32)
        m_prev = T.alloc_fragment((BLOCK_M,), T.float32)
        part = T.alloc_fragment((BLOCK_M,), T.float32)
        l = T.alloc_fragment((BLOCK_M,), T.float32)  # noqa: E741
        T.fill(m, -T.infinity(T.float32))
        T.fill(l, 0.0)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], x)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                if k * BLOCK_N + j >= N:
                    x[i, j] = -T.infinity(T.float32)
            T.copy(m, m_prev)
            T.reduce_max(x, m, dim=1, clear=False)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp2((x[i, j] - m[i]) * LOG2E)
            T.reduce_sum(x, part, dim=1)
            for i in T.Parallel(BLOCK_M):
                l[i] = l[i] * T.exp2((m_prev[i] - m[i]) * LOG2E) + part[i]
        for i in T.Parallel(BLOCK_M):
            l[i] = 1.0 / l[i]
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], x)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                x[i, j] = T.exp2((x[i, j] - m[i]) * LOG2E) * l[i]
            T.copy(x, C[bx * BLOCK_M, k * BLOCK_N])
    return C
