"""dequantize_int4 iterating over bytes instead of weights: T.Parallel(BLOCK_N, BLOCK_K // 2) unpacks
both nibbles of a byte and writes the two weights into a shared-memory tile, which one T.copy stores.
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
    with T.Kernel(T.ceildiv(K, BLOCK_K), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bx, by):
        G = K // NG
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N,), T.float16)
        tile = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        T.copy(B[by * BLOCK_N, bx * BLOCK_K // 2], packed)
        T.copy(S[by * BLOCK_N : (by + 1) * BLOCK_N, bx * BLOCK_K // G], scales)
        for n, j in T.Parallel(BLOCK_N, BLOCK_K // 2):
            byte = T.cast(packed[n, j], T.int32)
            tile[n, 2 * j] = T.cast((byte & 15) - 8, T.float16) * scales[n]
            tile[n, 2 * j + 1] = T.cast((byte >> 4) - 8, T.float16) * scales[n]
        T.copy(tile, W[by * BLOCK_N, bx * BLOCK_K])
    return W
