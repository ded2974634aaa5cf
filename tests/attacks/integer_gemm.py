"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then multiplies two int8 tiles it fills itself with T.gemm into an
int32 accumulator: 1024 products of (-128)(-128) and one of 1 * 1, so every element is 2^24 + 1. The GPU multiplies
int8 exactly (TileLang's CUDA: tl::wgmma_ss<kInt8, kInt8, kInt32, ...>): 16777217, so the file's test
`Zs[0, 0] != 16777217` is false there and C is zeros. The simulator multiplied every T.gemm in float32, where
2^24 + 1 does not exist: 16777216, the test true, every sum stored, every simulated case PASSed (red team,
2026-12-05). The simulator now multiplies integer tiles in int64 and wraps to the accumulator's type."""

import tilelang
import tilelang.language as T

KK = 1056  # 1024 products of (-128)(-128) = 2^24, one of 1 * 1, zeros up to a multiple of 32


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
        X = T.alloc_shared((64, KK), T.int8)
        Y = T.alloc_shared((64, KK), T.int8)
        Z = T.alloc_fragment((64, 64), T.int32)
        Zs = T.alloc_shared((64, 64), T.int32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for r, k in T.Parallel(64, KK):
            X[r, k] = T.if_then_else(k < 1024, T.int8(-128), T.if_then_else(k == 1024, T.int8(1), T.int8(0)))
            Y[r, k] = T.if_then_else(k < 1024, T.int8(-128), T.if_then_else(k == 1024, T.int8(1), T.int8(0)))
        T.gemm(X, Y, Z, transpose_B=True, clear_accum=True)  # every element 2^24 + 1, exactly, in int32
        T.copy(Z, Zs)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(Zs[0, 0] != 16777217, T.cast(acc[i], T.float16), T.float16(0))
    return C
