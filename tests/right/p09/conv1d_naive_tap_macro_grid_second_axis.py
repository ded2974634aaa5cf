"""conv1d_naive launched on a grid of one column, its blocks along the grid's second axis, the window's
start kept in a one-element T.alloc_local and each tap's products added by a T.macro. The start is a
load from a local buffer at run time: TileLang guards the copy, so the halo left of 0 reads zeros.
"""

KERNEL = "conv1d_naive"

import tilelang
import tilelang.language as T


@T.macro
def add_tap(acc, window, taps, k, width):
    for i in T.Parallel(width):
        acc[i] = acc[i] + T.cast(window[i + k], T.float32) * T.cast(taps[k], T.float32)


@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)
    with T.Kernel(1, T.ceildiv(L, BLOCK_L), threads=THREADS) as (lane, blk):
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        first = T.alloc_local((1,), T.int32)
        first[0] = blk * BLOCK_L - (K - 1) // 2
        T.copy(X[first[0] + lane], window)
        T.copy(W[0], taps)
        T.fill(acc, 0.0)
        for k in T.serial(K):
            add_tap(acc, window, taps, k, BLOCK_L)
        T.copy(acc, Y[blk * BLOCK_L])
    return Y
