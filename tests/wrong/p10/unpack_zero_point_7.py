"""dequantize_int4 with a zero point of 7 (`nibble - 7`): every weight is off by its group's scale, the same
along each group of G columns."""

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
            byte = T.cast(packed[n, k // 2], T.int32)
            nibble = (byte >> (4 * (k % 2))) & 15
            W_tile[n, k] = T.cast(nibble - 7, T.float16) * scales[n]
        T.copy(W_tile, W[by * BLOCK_N, bx * BLOCK_K])

    return W
