"""conv1d_channels with the grid axes swapped: the first grid axis counts blocks of output channels
and the second blocks of positions (T.Kernel(ceildiv(C_out, BLOCK_O), ceildiv(L, BLOCK_L))).
"""

KERNEL = "conv1d_channels"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_channels(X, W, BLOCK_O: int, BLOCK_L: int, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    with T.Kernel(T.ceildiv(C_out, BLOCK_O), T.ceildiv(L, BLOCK_L), threads=THREADS) as (bo, bl):
        P = (K - 1) // 2
        t0 = bl * BLOCK_L - P
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((BLOCK_O, K), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for c in T.serial(C_in):
            T.copy(X[c, t0 : t0 + BLOCK_L + K - 1], window)
            T.copy(W[bo * BLOCK_O : (bo + 1) * BLOCK_O, c, 0:K], taps)
            for k in T.serial(K):
                for o, i in T.Parallel(BLOCK_O, BLOCK_L):
                    acc[o, i] += T.cast(taps[o, k], T.float32) * T.cast(window[i + k], T.float32)
        T.copy(acc, Y[bo * BLOCK_O, bl * BLOCK_L])
    return Y
