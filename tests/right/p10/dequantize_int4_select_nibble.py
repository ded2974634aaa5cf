"""dequantize_int4 picking the nibble with T.if_then_else (low nibble `byte & 15` for even columns,
high nibble `byte >> 4` for odd ones) instead of a variable shift, with the grid axes swapped
(first axis over row tiles) and the scales in a fragment.
"""

KERNEL = "dequantize_int4"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequantize_int4(B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    N, K, NG = T.const("N, K, NG")
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    W = T.empty((N, K), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(K, BLOCK_K), threads=THREADS) as (bn, bk):
        G = K // NG
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_fragment((BLOCK_N,), T.float16)
        tile = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        T.copy(B[bn * BLOCK_N, bk * BLOCK_K // 2], packed)
        T.copy(S[bn * BLOCK_N : (bn + 1) * BLOCK_N, bk * BLOCK_K // G], scales)
        for n, k in T.Parallel(BLOCK_N, BLOCK_K):
            byte = T.cast(packed[n, k // 2], T.int32)
            q = T.if_then_else(k % 2 == 0, byte & 15, byte >> 4)
            tile[n, k] = T.cast(q - 8, T.float16) * scales[n]
        T.copy(tile, W[bn * BLOCK_N, bk * BLOCK_K])
    return W
