"""dequant_matmul unpacking the weights straight into the shared W tile in T.Parallel (no register
fragment and no T.copy between them), the nibble picked with T.if_then_else.
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
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        w = T.alloc_shared((BLOCK_N, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.copy(S[bx * BLOCK_N, 0], scales)
        T.clear(acc)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], a)
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                byte = T.cast(packed[n, kk // 2], T.int32)
                q = T.if_then_else(kk % 2 == 1, byte >> 4, byte & 15)
                w[n, kk] = T.cast(q - 8, T.float16) * scales[n, k * BLOCK_K // G]
            T.gemm(a, w, acc, transpose_B=True)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
