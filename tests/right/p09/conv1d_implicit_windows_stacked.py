"""conv1d_implicit with the K windows stacked in one 2-D shared buffer, tap k's window in rows
k * BLOCK_C to (k + 1) * BLOCK_C, and the taps in T.serial loops: each copy and each T.gemm takes that
band of rows. (The stack is K * BLOCK_C x BLOCK_L, an im2col tile with its rows in tap-major order,
but filled by copies from X, not built from other shared tiles.)"""

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
        stack = T.alloc_shared((K * BLOCK_C, BLOCK_L), T.float16)
        tap_weights = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            c0 = cb * BLOCK_C
            T.copy(W2[by * BLOCK_O, c0 * K], weights)
            for k in T.serial(K):
                start = bx * BLOCK_L - P + k
                T.copy(X[c0 : c0 + BLOCK_C, start : start + BLOCK_L], stack[k * BLOCK_C : (k + 1) * BLOCK_C, :])
            for k in T.serial(K):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    tap_weights[o, c] = weights[o, k + c * K]
                T.gemm(tap_weights, stack[k * BLOCK_C : (k + 1) * BLOCK_C, :], acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])
    return Y
