"""conv1d_im2col with a plain T.serial channel loop (not pipelined), the weight tile filled from W's
own 3-D indexing in T.Parallel (guarded, no T.reshape), and the grid axes swapped (first axis over
output-channel blocks).
"""

KERNEL = "conv1d_im2col"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_im2col(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    with T.Kernel(T.ceildiv(C_out, BLOCK_O), T.ceildiv(L, BLOCK_L), threads=THREADS) as (bo, bl):
        P = (K - 1) // 2
        HALO = (K - 1 + 7) // 8 * 8
        windows = T.alloc_shared((BLOCK_C, BLOCK_L + HALO), T.float16)
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        cols = T.alloc_shared((BLOCK_C * K, BLOCK_L), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.serial(T.ceildiv(C_in, BLOCK_C)):
            T.copy(X[cb * BLOCK_C, bl * BLOCK_L - P], windows)
            for o, r in T.Parallel(BLOCK_O, BLOCK_C * K):
                out_ch = bo * BLOCK_O + o
                c = cb * BLOCK_C + r // K
                w_tile[o, r] = T.if_then_else(out_ch < C_out and c < C_in, W[out_ch, c, r % K], T.float16(0))
            for r, t in T.Parallel(BLOCK_C * K, BLOCK_L):
                cols[r, t] = windows[r // K, t + r % K]
            T.gemm(w_tile, cols, acc)
        T.copy(acc, Y[bo * BLOCK_O, bl * BLOCK_L])
    return Y
