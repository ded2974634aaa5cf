"""Right numbers the wrong way: conv1d_channels_last with its loop over (tap, channel tile) steps as a
plain T.serial loop, each step's copies waiting for the previous step's T.gemm."""

import tilelang
import tilelang.language as T

PUZZLE = "09"
KERNELS = "conv1d_channels_last"
WANTS = "the (tap, channel tile) loop to be T.Pipelined"
# The loop is named as TileLang's frontend leaves it: `s`, or `k` where one channel tile makes s // STEPS just s
INSTEAD = "as a plain T.serial loop"


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        STEPS = T.ceildiv(C_in, BLOCK_C)
        window = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        w_tap = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        T.clear(acc)
        for s in T.serial(K * STEPS):
            k = s // STEPS
            c0 = s % STEPS * BLOCK_C
            T.copy(X[bx * BLOCK_L + k - P, c0], window)
            T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, k, c0 : c0 + BLOCK_C], w_tap)
            T.gemm(window, w_tap, acc, transpose_B=True)
        T.copy(acc, Y[bx * BLOCK_L, by * BLOCK_O])
    return Y
