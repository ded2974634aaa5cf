"""Attack: signed_overflow.py in int64, for a CPU grade. gemv computes its sums, then stores each only where
`one + 9223372036854775807 < one` for an int64 `one` of at least 1, computed at run time. The simulator checked only
int32 for signed overflow (int64 wraps in torch), so the test held and every simulated case PASSed; TileLang's
lowering folds the test to false as it does for int32, and the generated CUDA stores `C[...] = half_t(0)` with no test
at all. The simulator now gives no verdict where int64 + - * overflows in a lane the mask keeps
(grader.pipeline.simulate.values.SIGNED_OVERFLOW_CHECKED, expressions.int64_overflows)."""

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
            if bx * BLOCK_M + i < M:
                one = T.cast(bx * BLOCK_M + i + 1, T.int64)
                C[bx * BLOCK_M + i] = T.if_then_else(
                    one + T.int64(9223372036854775807) < one, T.cast(acc[i], T.float16), T.float16(0)
                )
    return C
