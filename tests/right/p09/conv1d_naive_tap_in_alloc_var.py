"""conv1d_naive holding the current tap, converted to float32, in a T.alloc_var scalar that the tap
loop overwrites, and the window's halo rounded up to a multiple of 8 elements.
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
        HALO = (K - 1 + 7) // 8 * 8
        window = T.alloc_shared((BLOCK_L + HALO,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        w = T.alloc_var(T.float32)
        T.copy(X[bx * BLOCK_L - P], window)
        T.copy(W[0], taps)
        T.clear(acc)
        for k in T.serial(K):
            w = T.cast(taps[k], T.float32)
            for i in T.Parallel(BLOCK_L):
                acc[i] += w * T.cast(window[i + k], T.float32)
        T.copy(acc, Y[bx * BLOCK_L])
    return Y
