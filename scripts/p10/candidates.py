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


# One token (M = 1) is a GEMV: the MMA would waste 15 of its 16 rows, so these run on the CUDA cores.
# Each block owns BLOCK_N rows of W and walks K in BLOCK_K steps, loading the packed bytes straight
# into registers (no shared tile, no pipeline: the other blocks on the SM hide the latency, as gemv's do).


@tilelang.jit
def decode_gemv(A, B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128, FP32_MAGIC: int = 1):
    """Per weight: the nibble, (q - 8) * scale, times A, summed in fp32 by T.reduce_sum."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, by):
        G = K // NG
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 2), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        partial = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float32)  # each lane's own running sums
        acc = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(partial)
        for k in T.serial(K // BLOCK_K):
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            T.copy(A[by, k * BLOCK_K], a_tile)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                if FP32_MAGIC:
                    # 0x4B000000 | q is the fp32 number 2^23 + q: minus (2^23 + 8) is q - 8, exactly
                    q = T.reinterpret(T.Cast("uint32", nibble) | T.uint32(0x4B000000), T.float32) - T.float32(8388616.0)
                else:
                    q = T.cast(T.cast(nibble, T.int32) - 8, T.float32)
                scale = T.cast(S[bx * BLOCK_N + n, (k * BLOCK_K + kk) // G], T.float32)
                partial[n, kk] += q * scale * T.cast(a_tile[kk], T.float32)
        T.reduce_sum(partial, acc, dim=1)  # one reduction across the block, at the end
        for n in T.Parallel(BLOCK_N):
            if bx * BLOCK_N + n < N:
                C[by, bx * BLOCK_N + n] = acc[n]

    return C


@tilelang.jit
def decode_gemv_group(A, B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    """decode_gemv with the scale taken out of the sum: BLOCK_K = G, so one scale per row per step, applied
    once to the step's sum instead of to every weight."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, by):
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 2), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float32)
        step = T.alloc_fragment((BLOCK_N,), T.float32)
        acc = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(acc)
        for k in T.serial(K // BLOCK_K):
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            T.copy(A[by, k * BLOCK_K], a_tile)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                q = T.reinterpret(T.Cast("uint32", nibble) | T.uint32(0x4B000000), T.float32) - T.float32(8388616.0)
                products[n, kk] = q * T.cast(a_tile[kk], T.float32)
            T.reduce_sum(products, step, dim=1)
            for n in T.Parallel(BLOCK_N):
                acc[n] += step[n] * T.cast(S[bx * BLOCK_N + n, k], T.float32)
        for n in T.Parallel(BLOCK_N):
            if bx * BLOCK_N + n < N:
                C[by, bx * BLOCK_N + n] = acc[n]

    return C


@tilelang.jit
def decode_gemv_dot8(A, B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128, UNROLL: int = 0):
    """decode_gemv with the scale taken out of each run of 8 weights (8 divides G): the 8 products q * a are
    summed first (a sum inside one lane), then the sum is scaled once. UNROLL = 1 unrolls the K loop, so that
    nvcc may issue every step's loads before the first step's arithmetic."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, by):
        G = K // NG
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 8, 4), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K // 8, 8), T.float16)
        products = T.alloc_fragment((BLOCK_N, BLOCK_K // 8, 8), T.float32)
        dots = T.alloc_fragment((BLOCK_N, BLOCK_K // 8), T.float32)
        partial = T.alloc_fragment((BLOCK_N, BLOCK_K // 8), T.float32)
        acc = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(partial)
        for k in (T.unroll if UNROLL else T.serial)(K // BLOCK_K):
            for n, c, b in T.Parallel(BLOCK_N, BLOCK_K // 8, 4):
                packed[n, c, b] = B[bx * BLOCK_N + n, k * BLOCK_K // 2 + c * 4 + b]
            for c, j in T.Parallel(BLOCK_K // 8, 8):
                a_tile[c, j] = A[by, k * BLOCK_K + c * 8 + j]
            for n, c, j in T.Parallel(BLOCK_N, BLOCK_K // 8, 8):
                nibble = (packed[n, c, j // 2] >> (4 * (j % 2))) & T.uint8(15)
                q = T.reinterpret(T.Cast("uint32", nibble) | T.uint32(0x4B000000), T.float32) - T.float32(8388616.0)
                products[n, c, j] = q * T.cast(a_tile[c, j], T.float32)
            T.reduce_sum(products, dots, dim=2)
            for n, c in T.Parallel(BLOCK_N, BLOCK_K // 8):
                scale = T.cast(S[bx * BLOCK_N + n, (k * BLOCK_K + c * 8) // G], T.float32)
                partial[n, c] += dots[n, c] * scale
        T.reduce_sum(partial, acc, dim=1)
        for n in T.Parallel(BLOCK_N):
            if bx * BLOCK_N + n < N:
                C[by, bx * BLOCK_N + n] = acc[n]

    return C


@tilelang.jit
def decode_gemv_pipelined(A, B, S, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128, TMA: int = 1):
    """decode_gemv with the packed tile staged through shared memory by T.Pipelined: STAGES tiles in flight
    per block instead of one."""
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, by):
        G = K // NG
        packed_shared = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 2), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        partial = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(partial)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed_shared, disable_tma=not TMA)
            T.copy(packed_shared, packed)
            T.copy(A[by, k * BLOCK_K], a_tile)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                q = T.reinterpret(T.Cast("uint32", nibble) | T.uint32(0x4B000000), T.float32) - T.float32(8388616.0)
                scale = T.cast(S[bx * BLOCK_N + n, (k * BLOCK_K + kk) // G], T.float32)
                partial[n, kk] += q * scale * T.cast(a_tile[kk], T.float32)
        T.reduce_sum(partial, acc, dim=1)
        for n in T.Parallel(BLOCK_N):
            if bx * BLOCK_N + n < N:
                C[by, bx * BLOCK_N + n] = acc[n]

    return C
