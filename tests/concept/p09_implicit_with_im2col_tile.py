"""Right numbers the wrong way: conv1d_implicit written as conv1d_im2col, one T.gemm of the W2 tile and
an im2col tile that a T.Parallel loop builds from the windows in shared memory."""

import tilelang
import tilelang.language as T

PUZZLE = "09"
KERNELS = "conv1d_implicit"
WANTS = "not an im2col tile built in shared memory"


@tilelang.jit
def conv1d_implicit(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        W2 = T.reshape(W, (C_out, C_in * K))
        windows = T.alloc_shared((BLOCK_C, BLOCK_L + K - 1), T.float16)
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        cols = T.alloc_shared((BLOCK_C * K, BLOCK_L), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(X[cb * BLOCK_C, bx * BLOCK_L - P], windows)
            T.copy(W2[by * BLOCK_O, cb * BLOCK_C * K], w_tile)
            for r, t in T.Parallel(BLOCK_C * K, BLOCK_L):
                cols[r, t] = windows[r // K, t + r % K]
            T.gemm(w_tile, cols, acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])
    return Y
