"""dequantize_int4 keeping the nibbles minus 8 in a uint8 fragment, the packed bytes' own type, before
converting them to fp16: q - 8 is negative for q < 8, and the store into uint8 wraps it to 248..255, so
every weight whose nibble is below 8 comes out as (q + 248) * scale. (Leaving out only the cast to int32
is harmless in TileLang 0.1.15: a uint8 shifted by an int32 amount, or minus a Python int, is widened to
int32 while tracing; it takes a uint8 destination to underflow.)"""

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
        q = T.alloc_fragment((BLOCK_N, BLOCK_K), T.uint8)  # the packed bytes' own type
        T.copy(B[by * BLOCK_N, bx * BLOCK_K // 2], packed)
        T.copy(S[by * BLOCK_N : (by + 1) * BLOCK_N, bx * BLOCK_K // G], scales)
        for n, k in T.Parallel(BLOCK_N, BLOCK_K):
            q[n, k] = ((packed[n, k // 2] >> (4 * (k % 2))) & 15) - 8
        for n, k in T.Parallel(BLOCK_N, BLOCK_K):
            W_tile[n, k] = T.cast(q[n, k], T.float16) * scales[n]
        T.copy(W_tile, W[by * BLOCK_N, bx * BLOCK_K])

    return W
