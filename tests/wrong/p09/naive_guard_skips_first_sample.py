"""conv1d_naive reading X straight from global memory under a hand-written padding guard that is off by one
at the left edge, `0 < pos` where `0 <= pos` is meant: X[0] never enters any sum, so the first P + 1
outputs lose a term (and only those: the rest of the signal is read as it should be)."""

KERNEL = "conv1d_naive"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), threads=THREADS) as bx:
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        T.copy(W[0], taps)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                pos = bx * BLOCK_L + i + k - (K - 1) // 2
                if 0 < pos and pos < L:
                    acc[i] += T.cast(X[pos], T.float32) * T.cast(taps[k], T.float32)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
