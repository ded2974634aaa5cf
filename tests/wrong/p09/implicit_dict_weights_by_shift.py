"""conv1d_implicit with its shifted windows in a dict keyed by the shift s (-P .. P), which then picks
each tap's weights at column c * K + s of the W2 tile: the shift where the tap's number, s + P, belongs.
Every window meets the weights of the tap P places to its left; for c = 0 and s < 0 the pick reads
before the start of the shared tile (the last channel's taps of the row above)."""

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
        half = (K - 1) // 2
        W2 = T.reshape(W, (C_out, C_in * K))
        weights = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        shifted = {s: T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for s in range(-half, half + 1)}
        picked = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        column = T.alloc_var(T.int32)
        column = bx * BLOCK_L
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(W2[by * BLOCK_O, cb * BLOCK_C * K], weights)
            for s, tile in shifted.items():
                T.copy(X[cb * BLOCK_C, column + s], tile)
            for s, tile in shifted.items():
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    picked[o, c] = weights[o, c * K + s]
                T.gemm(picked, tile, acc)
        T.copy(acc, Y[by * BLOCK_O, column])
    return Y
