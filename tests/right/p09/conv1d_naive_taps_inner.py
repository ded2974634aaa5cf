"""conv1d_naive with the loops the other way round: T.Parallel over the outputs outside, a T.serial
loop over the K taps inside it, the window loaded with slice syntax.
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
        start = bx * BLOCK_L - P
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        T.copy(X[start : start + BLOCK_L + K - 1], window)
        T.copy(W[0:K], taps)
        T.clear(acc)
        for i in T.Parallel(BLOCK_L):
            for k in T.serial(K):
                acc[i] += T.cast(window[i + k], T.float32) * T.cast(taps[k], T.float32)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
