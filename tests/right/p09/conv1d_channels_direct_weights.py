"""conv1d_channels reading the weights straight from global memory inside the T.Parallel loop
(guarded on the output channel) instead of copying a BLOCK_O x K slice into shared memory; the
window copy written with a 2-D region start.
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
    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        window = T.alloc_shared((1, BLOCK_L + K - 1), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for c in T.serial(C_in):
            T.copy(X[c, bx * BLOCK_L - P], window)
            for k in T.serial(K):
                for o, i in T.Parallel(BLOCK_O, BLOCK_L):
                    out_ch = by * BLOCK_O + o
                    w = T.if_then_else(out_ch < C_out, T.cast(W[out_ch, c, k], T.float32), 0.0)
                    acc[o, i] += w * T.cast(window[0, i + k], T.float32)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])
    return Y
