"""conv1d_implicit with the grid's first axis over output-channel blocks, the taps numbered by their
shift (-P .. P, zipped with the list of windows) instead of by k, and the accumulator cleared by T.fill."""

KERNEL = "conv1d_implicit"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_implicit(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    with T.Kernel(T.ceildiv(C_out, BLOCK_O), T.ceildiv(L, BLOCK_L), threads=THREADS) as (ob, lb):
        pad = K // 2
        W2 = T.reshape(W, (C_out, C_in * K))
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]
        w_tap = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.fill(acc, 0)
        for step in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(W2[ob * BLOCK_O, step * BLOCK_C * K], w_tile)
            for shift, window in zip(range(-pad, pad + 1), windows):
                T.copy(X[step * BLOCK_C, lb * BLOCK_L + shift], window)
            for shift, window in zip(range(-pad, pad + 1), windows):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    w_tap[o, c] = w_tile[o, c * K + shift + pad]
                T.gemm(w_tap, window, acc)
        T.copy(acc, Y[ob * BLOCK_O, lb * BLOCK_L])
    return Y
