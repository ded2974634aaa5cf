"""Attack: saturating_cast.py through T.copy, for a CPU grade (--device cpu, --JudgeChecks.device=cpu). gemv computes
its sums, fills a float32 fragment with x = |sum| + 3e9, copies it into an int32 fragment with T.copy (which converts,
element by element), and stores each sum only where that integer is negative. The generated CUDA converts with
`(int)(v.x)`, PTX cvt.rzi.s32.f32, which saturates: INT_MAX, the test false on the GPU, C all zeros there. The
simulator converted T.cast as the GPU does (grader.pipeline.simulate.values.saturated) but a tile op's conversion
(T.copy, and the results of T.reduce and T.cumsum) with torch's `.to`, as x86 does: INT_MIN, the test true, every
sum stored, every simulated case PASSed (red team, 2026-12-05). A tile op now converts into an integer buffer as
T.cast does."""

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
        far = T.alloc_fragment((BLOCK_M,), T.float32)
        flag = T.alloc_fragment((BLOCK_M,), T.int32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            far[i] = T.abs(acc[i]) + T.float32(3e9)
        T.copy(far, flag)  # float32 to int32 in the copy: INT_MAX on the GPU (cvt.rzi saturates), INT_MIN on x86
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(flag[i] < 0, T.cast(acc[i], T.float16), T.float16(0))
    return C
