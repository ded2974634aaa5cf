"""Candidate decode kernels for puzzle 10 (C = A @ W^T, W 4-bit), to time on the GPU before one
becomes a rung. Run through scripts/p10/sweep.py."""

from __future__ import annotations

import tilelang
import tilelang.language as T

# W as the MMA's A operand, unpacked into registers (no shared W tile), C^T = W @ A^T: it became puzzle
# 10's rung dequant_matmul_decode, and is timed from there under its sweep name.
from solutions.p10_dequant_matmul import dequant_matmul_decode as decode_wa  # noqa: F401


@tilelang.jit
def decode_ws(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128, MAGIC: int = 1):
    """The reference's shape (W unpacked to a shared tile) with the magic-number conversion."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        G = K // NG
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        W_local = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        W_tile = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                if MAGIC:
                    value = T.reinterpret(T.Cast("uint16", nibble) | T.uint16(0x6400), T.float16) - T.float16(1032)
                else:
                    value = T.cast(T.cast(nibble, T.int32) - 8, T.float16)
                W_local[n, kk] = value * scales[n, k * BLOCK_K // G]
            T.copy(W_local, W_tile)
            T.gemm(A_tile, W_tile, acc, transpose_B=True)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C


@tilelang.jit
def decode_wq(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    """decode_wa with nothing per weight but the bits: the tile multiplies the fp16 numbers 1024 + q
    (0x6400 | q), and per K step the accumulator gets scale * (that product - 1032 * the A row sums)."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        G = K // NG
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        A_local = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        A_sums = T.alloc_fragment((BLOCK_M,), T.float32)
        A_sums_shared = T.alloc_shared((BLOCK_M,), T.float32)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        Q_local = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        step = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        acc = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                Q_local[n, kk] = T.reinterpret(T.Cast("uint16", nibble) | T.uint16(0x6400), T.float16)
            T.copy(A_tile, A_local)
            T.reduce_sum(A_local, A_sums, dim=1)
            T.copy(A_sums, A_sums_shared)
            T.gemm(Q_local, A_tile, step, transpose_B=True, clear_accum=True)
            for n, m in T.Parallel(BLOCK_N, BLOCK_M):
                acc[n, m] += T.cast(scales[n, k * BLOCK_K // G], T.float32) * (step[n, m] - 1032.0 * A_sums_shared[m])
        for n, m in T.Parallel(BLOCK_N, BLOCK_M):
            if by * BLOCK_M + m < M and bx * BLOCK_N + n < N:
                C[by * BLOCK_M + m, bx * BLOCK_N + n] = acc[n, m]

    return C
