"""dequant_matmul_decode with the grid axes swapped (the first axis over row tiles of C, the second
over rows of W), scalar temporaries for the block's first row and column, and the transposed store
guarded by one combined condition on named temporaries.
"""

KERNEL = "dequant_matmul_decode"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequant_matmul_decode(A, B, S, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), T.ceildiv(N, BLOCK_N), threads=THREADS) as (bm, bn):
        G = K // NG
        row0 = bm * BLOCK_M
        col0 = bn * BLOCK_N
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        packed = T.alloc_shared((BLOCK_N, BLOCK_K // 2), T.uint8)
        scales = T.alloc_shared((BLOCK_N, NG), T.float16)
        w = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float16)
        ct = T.alloc_fragment((BLOCK_N, BLOCK_M), T.float32)
        T.copy(S[col0, 0], scales)
        T.clear(ct)
        for k in T.Pipelined(K // BLOCK_K, num_stages=STAGES):
            T.copy(A[row0, k * BLOCK_K], a)
            T.copy(B[col0, k * BLOCK_K // 2], packed)
            group = k * BLOCK_K // G
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                shift = 4 * (kk % 2)
                q = (packed[n, kk // 2] >> shift) & T.uint8(15)
                bits = T.Cast("uint16", q) | T.uint16(0x6400)
                w[n, kk] = (T.reinterpret(bits, T.float16) - T.float16(1032)) * scales[n, group]
            T.gemm(w, a, ct, transpose_B=True)
        for n, m in T.Parallel(BLOCK_N, BLOCK_M):
            row = row0 + m
            col = col0 + n
            if row < M and col < N:
                C[row, col] = ct[n, m]
    return C
