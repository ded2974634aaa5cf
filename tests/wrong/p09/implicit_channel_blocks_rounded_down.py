"""conv1d_implicit whose loop over channel blocks rounds C_in down (`C_in // BLOCK_C`): the last, partial block
of input channels is never added, and with C_in < BLOCK_C no channel is."""

KERNEL = "conv1d_implicit"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_implicit(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        W2 = T.reshape(W, (C_out, C_in * K))  # W2[o, c * K + k] == W[o, c, k]
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]  # one per tap
        w_tap = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(C_in // BLOCK_C, num_stages=STAGES):
            T.copy(W2[by * BLOCK_O, cb * BLOCK_C * K], w_tile)
            for k, window in enumerate(windows):  # over a Python list: unrolled while tracing
                T.copy(X[cb * BLOCK_C, bx * BLOCK_L + k - P], window)
            for k, window in enumerate(windows):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    w_tap[o, c] = w_tile[o, c * K + k]
                T.gemm(w_tap, window, acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])

    return Y
