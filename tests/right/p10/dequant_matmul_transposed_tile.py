"""dequant_matmul storing the unpacked weights transposed, as a BLOCK_K x BLOCK_N shared tile
(W^T), so the gemm needs no transpose_B; the grid axes swapped (first axis over row tiles of C).
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
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        G = K // NG
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        w_t = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bn * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[bm * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[bn * BLOCK_N, k * BLOCK_K // 2], packed)
            for kk, n in T.Parallel(BLOCK_K, BLOCK_N):
                byte = T.cast(packed[n, kk // 2], T.int32)
                q = (byte >> (4 * (kk % 2))) & 15
                w_t[kk, n] = T.cast(q - 8, T.float16) * scales[n, k * BLOCK_K // G]
            T.gemm(a, w_t, acc)
        T.copy(acc, C[bm * BLOCK_M, bn * BLOCK_N])
    return C
