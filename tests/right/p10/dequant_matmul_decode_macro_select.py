"""dequant_matmul_decode with the unpacking of a K step in a T.macro, the nibble picked with
T.if_then_else (low four bits for even columns, the byte shifted by 4 for odd ones) instead of a
variable shift, and the block's scales for the step read into a fragment first.
"""

KERNEL = "dequant_matmul_decode"

import tilelang
import tilelang.language as T


@T.macro
def unpack_step(packed, scales, step_scales, W_local, group, BLOCK_N, BLOCK_K):
    for n in T.Parallel(BLOCK_N):
        step_scales[n] = scales[n, group]
    for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
        byte = packed[n, kk // 2]
        q = T.if_then_else(kk % 2 == 0, byte & T.uint8(15), byte >> T.uint8(4))
        value = T.reinterpret(T.uint16(0x6400) | T.Cast("uint16", q), T.float16)
        W_local[n, kk] = (value - T.float16(1032)) * step_scales[n]


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
        step_scales = T.alloc_fragment((BLOCK_N,), T.float16)
        W_local = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            unpack_step(packed, scales, step_scales, W_local, k * BLOCK_K // G, BLOCK_N, BLOCK_K)
            T.gemm(W_local, A_tile, acc, transpose_B=True)
        for n, m in T.Parallel(BLOCK_N, BLOCK_M):
            if by * BLOCK_M + m < M and bx * BLOCK_N + n < N:
                C[by * BLOCK_M + m, bx * BLOCK_N + n] = acc[n, m]
    return C
