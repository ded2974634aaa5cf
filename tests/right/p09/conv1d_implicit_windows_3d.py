"""conv1d_implicit with the K windows in one 3-D shared buffer (tap, channel, position) and the taps in
T.serial loops instead of a Python list: each copy and each T.gemm takes the slice of one tap.

TileLang lowers it (for sm_90a: mma, the slices' regions squeezed to 2-D), and the simulator's T.gemm
takes such a slice, [1, BLOCK_C, BLOCK_L], as the BLOCK_C x BLOCK_L matrix it is."""

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
        W2 = T.reshape(W, (C_out, C_in * K))
        weights = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        shifted = T.alloc_shared((K, BLOCK_C, BLOCK_L), T.float16)
        tap_weights = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            c0 = cb * BLOCK_C
            T.copy(W2[by * BLOCK_O, c0 * K], weights)
            for k in T.serial(K):
                start = bx * BLOCK_L - P + k
                T.copy(X[c0 : c0 + BLOCK_C, start : start + BLOCK_L], shifted[k, :, :])
            for k in T.serial(K):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    tap_weights[o, c] = weights[o, k + c * K]
                T.gemm(tap_weights, shifted[k, :, :], acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])
    return Y
