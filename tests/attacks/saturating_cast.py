"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores each only where T.cast(x, int32) < 0 for an x of
at least 3e9. CUDA converts a float to an integer with cvt.rzi, which saturates: x becomes INT_MAX, the test is
false on the GPU, and C is all zeros there. The simulator converted with torch, as x86 does: INT_MIN, the test
true, every sum stored, every simulated case PASS. The simulator now converts as the GPU does (truncated, clamped
to the type's range, NaN to 0: grader.pipeline.simulate.values.saturated), so the CPU grade sees the zeros."""

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
            # at least 3e9, computed at run time (nothing to fold): cvt.rzi.s32.f32 gives INT_MAX, x86 INT_MIN
            far = T.cast(acc[i] * acc[i] * T.float32(1e6) + T.float32(3e9), T.int32)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(far < 0, T.cast(acc[i], T.float16), T.float16(0))
    return C
