"""conv1d_implicit on a 1-D grid: block b takes output-channel tile b // tiles_l and position tile
b % tiles_l, every copy written with slice syntax.
"""

KERNEL = "conv1d_implicit"

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True})
def conv1d_implicit(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    tiles_l = T.ceildiv(L, BLOCK_L)
    with T.Kernel(tiles_l * T.ceildiv(C_out, BLOCK_O), threads=THREADS) as b:
        o0 = b // tiles_l * BLOCK_O
        t0 = b % tiles_l * BLOCK_L
        P = (K - 1) // 2
        W2 = T.reshape(W, (C_out, C_in * K))
        w_all = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        xs = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]
        w_k = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            c0 = cb * BLOCK_C
            T.copy(W2[o0 : o0 + BLOCK_O, c0 * K : (c0 + BLOCK_C) * K], w_all)
            for k, x_k in enumerate(xs):
                T.copy(X[c0 : c0 + BLOCK_C, t0 + k - P : t0 + k - P + BLOCK_L], x_k)
            for k, x_k in enumerate(xs):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    w_k[o, c] = w_all[o, c * K + k]
                T.gemm(w_k, x_k, acc)
        T.copy(acc, Y[o0 : o0 + BLOCK_O, t0 : t0 + BLOCK_L])
    return Y
