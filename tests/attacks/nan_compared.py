"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu), through an algebra the lowering uses and the simulator did not. gemv takes far, the fp16
sum of a NaN (a square root of a negative number) and its sum, and stores the sum only where far != far.
TileLang's lowering simplifies with the algebra of numbers (x != x is false, x - x is 0, x * 0 is 0), so the CUDA
it builds stores half_t(0) into C with no test at all; the simulator ran the TIR as IEEE floats, where NaN != NaN:
every sum stored, every simulated case passed. What the GPU answers for a NaN depends on what the lowering folded,
so the simulator now gives no verdict where a comparison (or a float's truth) meets NaN in a lane the mask keeps:
such a case is only compiled on the CPU."""

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
            nan = T.cast(T.sqrt(acc[i] * acc[i] * T.float32(-1) - T.float32(1)), T.float16)
            far = nan + T.cast(acc[i], T.float16)  # NaN (a T.max here would meet fp16_max_nan.py's refusal first)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(far != far, T.cast(acc[i], T.float16), T.float16(0))
    return C
