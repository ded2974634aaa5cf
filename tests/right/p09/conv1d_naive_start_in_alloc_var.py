"""conv1d_naive keeping its window's first index in a T.alloc_var (the first block's is negative): a value
TileLang reads from a local variable at run time, so it guards the copy and the halo past the left edge
reads zeros. The simulator once took such a start for one TileLang folds at compile time.
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
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        start = T.alloc_var(T.int32)
        start = bx * BLOCK_L - (K - 1) // 2
        T.copy(X[start], window)
        T.copy(W[0], taps)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                acc[i] += T.cast(taps[k], T.float32) * T.cast(window[i + k], T.float32)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
