"""attention_two_pass with each pass's key tile in its own shared buffer; padding keys masked by an
`if` store; the fp16 weights P written to shared memory in the same T.Parallel loop that
exponentiates; the scores' loop nest written with the head dimension innermost (a T.serial loop
inside the T.Parallel one), each thread adding up its own dot products.
"""

KERNEL = "attention_two_pass"

import math

import tilelang
import tilelang.language as T


@tilelang.jit
def attention_two_pass(Q, K, V, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    M, N, D = T.const("M, N, D")
    Q: T.Tensor((M, D), T.float16)
    K: T.Tensor((N, D), T.float16)
    V: T.Tensor((N, D), T.float16)
    O = T.empty((M, D), T.float16)  # noqa: E741
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        scale = math.log2(math.e) / math.sqrt(D)
        q = T.alloc_shared((BLOCK_M, D), T.float16)
        k_first = T.alloc_shared((BLOCK_N, D), T.float16)
        k_second = T.alloc_shared((BLOCK_N, D), T.float16)
        v_tile = T.alloc_shared((BLOCK_N, D), T.float16)
        s = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        p = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, D), T.float32)
        m = T.alloc_fragment((BLOCK_M,), T.float32)
        l = T.alloc_fragment((BLOCK_M,), T.float32)  # noqa: E741

        T.copy(Q[bx * BLOCK_M, 0], q)
        T.fill(m, -T.infinity(T.float32))
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[j * BLOCK_N, 0], k_first)
            T.clear(s)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                for d in T.serial(D):
                    s[i, c] += T.cast(q[i, d], T.float32) * T.cast(k_first[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                if j * BLOCK_N + c >= N:
                    s[i, c] = -T.infinity(T.float32)
            T.reduce_max(s, m, dim=1, clear=False)

        T.clear(acc)
        T.clear(l)
        for j in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(K[j * BLOCK_N, 0], k_second)
            T.clear(s)
            for d in T.serial(D):
                for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                    s[i, c] += T.cast(q[i, d], T.float32) * T.cast(k_second[c, d], T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                if j * BLOCK_N + c >= N:
                    s[i, c] = -T.infinity(T.float32)
            for i, c in T.Parallel(BLOCK_M, BLOCK_N):
                s[i, c] = T.exp2(s[i, c] * scale - m[i] * scale)
                p[i, c] = T.cast(s[i, c], T.float16)
            T.reduce_sum(s, l, dim=1, clear=False)
            T.copy(V[j * BLOCK_N, 0], v_tile)
            for c in T.serial(BLOCK_N):
                for i, d in T.Parallel(BLOCK_M, D):
                    acc[i, d] += T.cast(p[i, c], T.float32) * T.cast(v_tile[c, d], T.float32)

        for i, d in T.Parallel(BLOCK_M, D):
            acc[i, d] = acc[i, d] / l[i]
        T.copy(acc, O[bx * BLOCK_M, 0])
    return O
