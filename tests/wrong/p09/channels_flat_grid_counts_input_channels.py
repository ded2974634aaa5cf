"""conv1d_channels on a 1-D grid sized by ceildiv(C_in, BLOCK_O) channel tiles instead of ceildiv(C_out,
BLOCK_O): the wrong tensor's channel count. With fewer input than output channels the last output
channel tiles get no block, and their rows of Y are never written."""

KERNEL = "conv1d_channels"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_channels(X, W, BLOCK_O: int, BLOCK_L: int, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    tiles_l = T.ceildiv(L, BLOCK_L)
    with T.Kernel(tiles_l * T.ceildiv(C_in, BLOCK_O), threads=THREADS) as b:
        bx = b % tiles_l
        by = b // tiles_l
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((BLOCK_O, K), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for c in T.serial(C_in):
            T.copy(X[c, bx * BLOCK_L - P], window)
            T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, c, 0:K], taps)
            for k in T.serial(K):
                for o, i in T.Parallel(BLOCK_O, BLOCK_L):
                    acc[o, i] += T.cast(taps[o, k], T.float32) * T.cast(window[i + k], T.float32)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])
    return Y
