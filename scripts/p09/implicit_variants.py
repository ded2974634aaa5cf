"""Variants of puzzle 09's conv1d_implicit for scripts/p09/implicit_fault.py: each changes one thing
the warp-specialized build might fault on, with warp specialization left on (TileLang's default)."""

from __future__ import annotations

import tilelang
import tilelang.language as T


@tilelang.jit
def weights_in_shared(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    """The tap's weights picked into a shared tile, not a register fragment: both T.gemm operands in
    shared memory (wgmma's ss form, no register operand)."""
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        W2 = T.reshape(W, (C_out, C_in * K))
        w_tile = T.alloc_shared((BLOCK_O, BLOCK_C * K), T.float16)
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]
        w_taps = [T.alloc_shared((BLOCK_O, BLOCK_C), T.float16) for _ in range(K)]
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            T.copy(W2[by * BLOCK_O, cb * BLOCK_C * K], w_tile)
            for k, window in enumerate(windows):
                T.copy(X[cb * BLOCK_C, bx * BLOCK_L + k - P], window)
            for k, (window, w_tap) in enumerate(zip(windows, w_taps)):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    w_tap[o, c] = w_tile[o, c * K + k]
                T.gemm(w_tap, window, acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])

    return Y


@tilelang.jit
def windows_only(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    """No weights tile: each tap's weights are read from global memory straight into the fragment, so
    the pipeline's only TMA copies are the shifted windows of X."""
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        windows = [T.alloc_shared((BLOCK_C, BLOCK_L), T.float16) for _ in range(K)]
        w_tap = T.alloc_fragment((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(acc)
        for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
            for k, window in enumerate(windows):
                T.copy(X[cb * BLOCK_C, bx * BLOCK_L + k - P], window)
            for k, window in enumerate(windows):
                for o, c in T.Parallel(BLOCK_O, BLOCK_C):
                    inside = by * BLOCK_O + o < C_out and cb * BLOCK_C + c < C_in
                    w_tap[o, c] = T.if_then_else(inside, W[by * BLOCK_O + o, cb * BLOCK_C + c, k], T.float16(0))
                T.gemm(w_tap, window, acc)
        T.copy(acc, Y[by * BLOCK_O, bx * BLOCK_L])

    return Y
