"""conv1d_implicit walking the taps with `for k in range(K)` and indexing the list of windows with k:
inside the kernel TileLang's frontend turns that loop into a T.serial loop, so k is a TIR variable,
which cannot index a Python list. Tracing stops at `windows[k]` on every case."""

KERNEL = "conv1d_implicit"
CAUGHT_BY = "compile"

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
        W2 = T.reshape(W, (C_out, C_in * K))  # W2[o, c * K + k] == W[o, c, k]
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]  # one per tap
        w_tap = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(W2[by * BLOCK_O, cb * BLOCK_C * K], w_tile)
            for k in range(K):
                T.copy(X[cb * BLOCK_C, bx * BLOCK_L + k - P], windows[k])
            for k in range(K):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    w_tap[o, c] = w_tile[o, c * K + k]
                T.gemm(w_tap, windows[k], acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])

    return Y
