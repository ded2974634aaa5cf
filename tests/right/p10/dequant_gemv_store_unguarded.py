"""dequant_gemv storing the BLOCK_N row sums with no hand-written guard at the tail of N: TileLang guards
every global access itself (puzzle 01, "Who guards the edge"), per dimension, so the last block's stores
to columns at or past N are dropped, not written into the next token's row of C.
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
        RUNS = BLOCK_K // 8
        packed = T.alloc_fragment((BLOCK_N, BLOCK_K // 2), T.uint8)
        a_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_N, RUNS, 8), T.float32)
        run_sums = T.alloc_fragment((BLOCK_N, RUNS), T.float32)
        lane_sums = T.alloc_fragment((BLOCK_N, RUNS), T.float32)
        row_sums = T.alloc_fragment((BLOCK_N,), T.float32)
        T.clear(lane_sums)
        for k in T.serial(K // BLOCK_K):
            T.copy(B[bx * BLOCK_N, k * BLOCK_K // 2], packed)
            T.copy(A[m, k * BLOCK_K], a_tile)
            for n, r, j in T.Parallel(BLOCK_N, RUNS, 8):
                nibble = (packed[n, r * 4 + j // 2] >> (4 * (j % 2))) & T.uint8(15)
                q = T.reinterpret(T.Cast("uint32", nibble) | T.uint32(0x4B000000), T.float32) - T.float32(8388616)
                products[n, r, j] = q * T.cast(a_tile[r * 8 + j], T.float32)
            T.reduce_sum(products, run_sums, dim=2)
            for n, r in T.Parallel(BLOCK_N, RUNS):
                scale = S[bx * BLOCK_N + n, (k * BLOCK_K + r * 8) // G]
                lane_sums[n, r] += run_sums[n, r] * T.cast(scale, T.float32)
        T.reduce_sum(lane_sums, row_sums, dim=1)
        for n in T.Parallel(BLOCK_N):
            C[m, bx * BLOCK_N + n] = row_sums[n]

    return C
