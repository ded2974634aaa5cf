"""conv1d_channels_last on a 1-D grid (block b takes position tile b // tiles_o and output-channel tile
b % tiles_o), with each step's two copies and its T.gemm in a T.macro."""

KERNEL = "conv1d_channels_last"

import tilelang
import tilelang.language as T


@T.macro
def tap_step(X, W, window, w_tap, acc, row, o0, k, c0):
    T.copy(X[row, c0], window)
    T.copy(W[o0 : o0 + w_tap.shape[0], k, c0 : c0 + w_tap.shape[1]], w_tap)
    T.gemm(window, w_tap, acc, transpose_B=True)


@tilelang.jit
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    tiles_o = (C_out + BLOCK_O - 1) // BLOCK_O
    tiles_c = (C_in + BLOCK_C - 1) // BLOCK_C
    with T.Kernel(T.ceildiv(L, BLOCK_L) * tiles_o, threads=THREADS) as b:
        t0 = b // tiles_o * BLOCK_L
        o0 = b % tiles_o * BLOCK_O
        window = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        w_tap = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        T.clear(acc)
        for s in T.Pipelined(K * tiles_c, num_stages=STAGES):
            k = s // tiles_c
            tap_step(X, W, window, w_tap, acc, t0 + k - (K - 1) // 2, o0, k, s % tiles_c * BLOCK_C)
        T.copy(acc, Y[t0, o0])

    return Y
