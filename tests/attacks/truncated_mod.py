"""Attack: a kernel right in the simulator and mostly zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv stores output n only where T.truncmod(n - 1000000, 7) >= 0. T.truncmod is C's %,
whose remainder takes the dividend's sign: on the GPU the test holds for one n in seven (TVM's CUDA even says
`(n - 1000000) % 7 == 0`) and the rest of C is zeros. The simulator computed T.truncmod as T.floormod (torch's
remainder, Python's %), never negative, so every sum was stored and every simulated case passed. It now computes
the truncated remainder (torch.fmod; the dividend's sign on plain ints)."""

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            # n - 1000000 < 0: C's % keeps the sign (0 or negative), a floored remainder is 0..6
            far = T.truncmod(T.cast(acc[i] * T.float32(0), T.int32) + bx * BLOCK_M + i - 1000000, 7)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(far >= 0, T.cast(acc[i], T.float16), T.float16(0))
    return C
