"""Attack: nan_max.py in fp16, for a CPU grade. gemv takes far = T.max(NaN, 64 * sum) in float16 (the NaN a square
root of a negative number), casts far to int32 and stores the sum only where that is 0. The simulator's NaN check for
T.max and T.min covered fp32 and fp64 only, so far was torch.maximum's NaN, the cast gave 0 and every sum was stored;
the generated CUDA takes `__hmax` (PTX max.f16), which returns the number when one operand is NaN: the cast is nonzero
for almost every row and C is zeros there. No comparison meets the NaN, so the comparison check said nothing. The
check now covers every float type (grader.pipeline.simulate.expressions.Expressions.no_nan_against_a_number)."""

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
                far = T.max(
                    T.cast(T.sqrt(T.float32(-1.0) - T.cast(i, T.float32)), T.float16),
                    T.cast(acc[i], T.float16) * T.float16(64),
                )
                C[bx * BLOCK_M + i] = T.if_then_else(T.cast(far, T.int32) == 0, T.cast(acc[i], T.float16), T.float16(0))
    return C
