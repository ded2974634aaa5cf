"""dequantize_int4 reading the byte as int8 and taking the high nibble by an arithmetic shift with no
mask: bytes of 128 and up give -8..-1 instead of 8..15."""

KERNEL = "dequantize_int4"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequantize_int4(B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    N, K, NG = T.const("N, K, NG")
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    W = T.empty((N, K), T.float16)

    with T.Kernel(T.ceildiv(K, BLOCK_K), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bx, by):
        G = K // NG
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N,), T.float16)
        W_tile = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        T.copy(B[by * BLOCK_N, bx * BLOCK_K // 2], packed)
        T.copy(S[by * BLOCK_N : (by + 1) * BLOCK_N, bx * BLOCK_K // G], scales)
        for n, k in T.Parallel(BLOCK_N, BLOCK_K):
            byte = T.cast(T.cast(packed[n, k // 2], T.int8), T.int32)
            nibble = T.if_then_else(k % 2 == 0, byte & 15, byte >> 4)
            W_tile[n, k] = T.cast(nibble - 8, T.float16) * scales[n]
        T.copy(W_tile, W[by * BLOCK_N, bx * BLOCK_K])

    return W
