"""dequantize_int4 reading each element's byte and scale straight from global B and S in T.Parallel
(guarded on the row), the group of every element computed from its own column, instead of copying
the bytes and the tile's scales into shared memory.
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
        tile = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        for n, k in T.Parallel(BLOCK_N, BLOCK_K):
            row = by * BLOCK_N + n
            col = bx * BLOCK_K + k
            byte = T.if_then_else(row < N, T.cast(B[row, col // 2], T.int32), 8)
            q = (byte >> (4 * (col % 2))) & 15
            scale = T.if_then_else(row < N, S[row, col // G], T.float16(0))
            tile[n, k] = T.cast(q - 8, T.float16) * scale
        T.copy(tile, W[by * BLOCK_N, bx * BLOCK_K])
    return W
