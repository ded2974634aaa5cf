"""conv1d_naive accumulating in float16: fine for 3 taps, far off for the 1001-tap filter."""

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
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float16)
        T.copy(X[bx * BLOCK_L - P], window)
        T.copy(W[0], taps)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                acc[i] += window[i + k] * taps[k]
        T.copy(acc, Y[bx * BLOCK_L])

    return Y
