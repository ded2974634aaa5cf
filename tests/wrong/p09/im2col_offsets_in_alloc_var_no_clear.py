"""conv1d_im2col with its offsets in T.alloc_var scalars and no T.clear(acc) before the channel loop: the
first T.gemm adds into whatever the accumulator's registers held."""

KERNEL = "conv1d_im2col"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_im2col(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        W2 = T.reshape(W, (C_out, C_in * K))
        HALO = (K + 6) // 8 * 8
        windows = T.alloc_shared((BLOCK_C, BLOCK_L + HALO), T.float16)
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        cols = T.alloc_shared((BLOCK_C * K, BLOCK_L), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        t_first = T.alloc_var(T.int32)
        o_first = T.alloc_var(T.int32)
        y_first = T.alloc_var(T.int32)
        t_first = bx * BLOCK_L - (K - 1) // 2
        o_first = by * BLOCK_O
        y_first = bx * BLOCK_L
        for step in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(X[step * BLOCK_C, t_first], windows)
            T.copy(W2[o_first, step * BLOCK_C * K], w_tile)
            for r, t in T.Parallel(BLOCK_C * K, BLOCK_L):
                cols[r, t] = windows[r // K, t + r % K]
            T.gemm(w_tile, cols, acc)
        T.copy(acc, Y[o_first, y_first])
    return Y
