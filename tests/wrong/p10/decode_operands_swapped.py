"""dequant_matmul_decode keeping dequant_matmul's operand order, T.gemm(A_tile, W_local, acc,
transpose_B=True), into its transposed BLOCK_N x BLOCK_M accumulator: the product is C's tile, not
C^T's, and the transposed store writes it back transposed. Where BLOCK_M == BLOCK_N the shapes match
and the numbers are wrong; where they differ T.gemm's shape check stops the trace."""

KERNEL = "dequant_matmul_decode"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequant_matmul_decode(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
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
        acc = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)  # C^T: a row per row of W
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                nibble = (packed[n, kk // 2] >> (4 * (kk % 2))) & T.uint8(15)
                # the bits 0x6400 | q are the fp16 number 1024 + q: minus 1032 is q - 8, no conversion
                value = T.reinterpret(T.Cast("uint16", nibble) | T.uint16(0x6400), T.float16) - T.float16(1032)
                W_local[n, kk] = value * scales[n, k * BLOCK_K // G]
            T.gemm(A_tile, W_local, acc, transpose_B=True)
        for n, m in T.Parallel(BLOCK_N, BLOCK_M):
            if by * BLOCK_M + m < M and bx * BLOCK_N + n < N:
                C[by * BLOCK_M + m, bx * BLOCK_N + n] = acc[n, m]

    return C
