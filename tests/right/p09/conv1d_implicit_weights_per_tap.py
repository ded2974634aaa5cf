"""conv1d_implicit without the W2 tile: each tap's (BLOCK_O, BLOCK_C) weights are copied straight from
W (a slice at a fixed last index) into a shared tile of their own, and T.gemm reads both operands from
shared memory."""

KERNEL = "conv1d_implicit"

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
        o0 = by * BLOCK_O
        taps = [T.alloc_shared((BLOCK_O, BLOCK_C), T.float16) for _ in range(K)]
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            c0 = cb * BLOCK_C
            for k, (tap, window) in enumerate(zip(taps, windows)):
                T.copy(W[o0 : o0 + BLOCK_O, c0 : c0 + BLOCK_C, k], tap)
                T.copy(X[c0, bx * BLOCK_L + (k - P)], window)
            for tap, window in zip(taps, windows):
                T.gemm(tap, window, acc)
        T.copy(acc, Y[o0, bx * BLOCK_L])
    return Y
