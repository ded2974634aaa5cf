"""dequant_gemv written the plain way: each weight converted from its integer nibble minus 8 with T.cast
(no fp32 bit trick) and multiplied by its own scale, read from S for its column; the products added into
running sums of BLOCK_N x BLOCK_K, one per weight position, with no runs of 8 and no per-step reduction.
"""

KERNEL = "dequant_gemv"

import tilelang
import tilelang.language as T


@tilelang.jit
def dequant_gemv(A, B, S, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K, NG = T.const("M, N, K, NG")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 2), T.uint8)
    S: T.Tensor((N, NG), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), M, threads=THREADS) as (bx, m):
        G = K // NG
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 2), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        sums = T.alloc_fragment((BLOCK_N, BLOCK_K), T.float32)
        totals = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(sums)
        for k in T.serial(K // BLOCK_K):
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            T.copy(A[m, k * BLOCK_K], a_tile)
            for n, kk in T.Parallel(BLOCK_N, BLOCK_K):
                byte = T.cast(packed[n, kk // 2], T.int32)
                q = (byte >> (4 * (kk % 2))) & 15
                weight = T.cast(q - 8, T.float32) * T.cast(S[bx * BLOCK_N + n, (k * BLOCK_K + kk) // G], T.float32)
                sums[n, kk] += weight * T.cast(a_tile[kk], T.float32)
        T.reduce_sum(sums, totals, dim=1)
        for n in T.Parallel(BLOCK_N):
            if bx * BLOCK_N + n < N:
                C[m, bx * BLOCK_N + n] = totals[n]

    return C
