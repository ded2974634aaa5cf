"""conv1d_channels that copies the taps by their first element, T.copy(W[o0, c, 0], taps), as a 1-D
copy of X's window is written. T.copy fits the 2-D tile to the last two axes of the 3-D W, so it reads
W[o0, c : c + BLOCK_O, 0:K]: the taps of BLOCK_O input channels of one output channel (zeros past the
last channel) instead of BLOCK_O output channels of input channel c. Every simulated case fails."""

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

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        t0 = bx * BLOCK_L - P
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((BLOCK_O, K), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for c in T.serial(C_in):
            T.copy(X[c, t0 : t0 + BLOCK_L + K - 1], window)
            T.copy(W[by * BLOCK_O, c, 0], taps)
            for k in T.serial(K):
                for o, i in T.Parallel(BLOCK_O, BLOCK_L):
                    acc[o, i] += T.cast(taps[o, k], T.float32) * T.cast(window[i + k], T.float32)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])

    return Y
