"""dequant_matmul_decode with the nibble taken out in 16 bits: the byte widened to uint16 first, then
shifted and masked there with uint16 constants, the exponent bits ORed in as a hexadecimal literal,
and 1032 taken off in two exact steps (1024, then 8); the scale applied in float32 and rounded to
float16 once, which gives the same float16 product as multiplying in float16.
"""

KERNEL = "dequant_matmul_decode"

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
        acc = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                wide = T.Cast("uint16", packed[n, kk // 2])
                q = (wide >> T.Cast("uint16", 4 * (kk % 2))) & T.uint16(0xF)
                magic = T.reinterpret(q | T.uint16(0x6400), T.float16)
                centred = (magic - T.float16(1024)) - T.float16(8)
                scale = T.Cast("float32", scales[n, k * BLOCK_K // G])
                W_local[n, kk] = T.Cast("float16", T.Cast("float32", centred) * scale)
            T.gemm(W_local, A_tile, acc, transpose_B=True)
        for n, m in T.Parallel(BLOCK_N, BLOCK_M):
            if bx * BLOCK_N + n < N:
                if by * BLOCK_M + m < M:
                    C[by * BLOCK_M + m, bx * BLOCK_N + n] = acc[n, m]
    return C
