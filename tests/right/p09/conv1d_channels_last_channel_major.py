"""conv1d_channels_last walking its steps channel tile by channel tile, all K taps of a tile before the
next (the tap from the remainder by K, the tile from the quotient), with the grid's first axis over
output-channel blocks and the accumulator cleared by T.fill."""

KERNEL = "conv1d_channels_last"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    with T.Kernel(T.ceildiv(C_out, BLOCK_O), T.ceildiv(L, BLOCK_L), threads=THREADS) as (bo, bl):
        half = K // 2
        x_tile = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        out = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        T.fill(out, 0)
        for step in T.Pipelined(T.ceildiv(C_in, BLOCK_C) * K, num_stages=STAGES):
            tap = step % K
            first = (step // K) * BLOCK_C
            T.copy(X[bl * BLOCK_L - half + tap : (bl + 1) * BLOCK_L - half + tap, first : first + BLOCK_C], x_tile)
            T.copy(W[bo * BLOCK_O : bo * BLOCK_O + BLOCK_O, tap, first : first + BLOCK_C], w_tile)
            T.gemm(x_tile, w_tile, out, transpose_B=True)
        T.copy(out, Y[bl * BLOCK_L : (bl + 1) * BLOCK_L, bo * BLOCK_O : (bo + 1) * BLOCK_O])

    return Y
