"""dequant_matmul copying, at every K step, only the BLOCK_N scales of that step's group into shared
memory, instead of all of the block's groups once before the loop.
"""

KERNEL = "dequant_matmul"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequant_matmul(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        G = K // NG
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        step_scales = T.alloc_shared((BLOCK_N,), T.float16)
        unpacked = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        w = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            T.copy(S[bx * BLOCK_N : (bx + 1) * BLOCK_N, k * BLOCK_K // G], step_scales)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                byte = T.cast(packed[n, kk // 2], T.int32)
                q = (byte >> (4 * (kk % 2))) & 15
                unpacked[n, kk] = T.cast(q - 8, T.float16) * step_scales[n]
            T.copy(unpacked, w)
            T.gemm(a, w, acc, transpose_B=True)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
