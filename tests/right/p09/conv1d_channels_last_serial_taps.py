"""conv1d_channels_last with two loops instead of one: the taps in a T.serial loop outside, and inside
it a T.Pipelined loop over the channel tiles, so the pipeline restarts at every tap; the window's
start kept in a variable. Its decorator turns warp specialization off, which the stub leaves on: built with it
on, TileLang 0.1.15 miscompiles this loop nest (tests/wrong/p09/channels_last_taps_warp_specialized.py)."""

KERNEL = "conv1d_channels_last"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        weights = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            start = bx * BLOCK_L + k - P
            for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
                T.copy(X[start, cb * BLOCK_C], window)
                T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, k, cb * BLOCK_C : (cb + 1) * BLOCK_C], weights)
                T.gemm(window, weights, acc, transpose_B=True)
        T.copy(acc, Y[bx * BLOCK_L, by * BLOCK_O])

    return Y
