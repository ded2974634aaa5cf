"""conv1d_naive reading X and W straight from global memory in the tap loop, with the "same" padding
written by hand (T.if_then_else on 0 <= position < L), instead of a shared window with a halo.
"""

KERNEL = "conv1d_naive"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), threads=THREADS) as bx:
        P = (K - 1) // 2
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                pos = bx * BLOCK_L + i + k - P
                acc[i] += T.if_then_else(pos >= 0 and pos < L, T.cast(X[pos], T.float32) * T.cast(W[k], T.float32), 0.0)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
