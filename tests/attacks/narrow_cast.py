"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores each only where T.cast(x, int8) is 127 for an x just
above 300 (300 + |sum| / 64). The simulator converted a float to every integer type as cvt.rzi converts to int32:
truncated and clamped to the type's range, so x became 127 and every sum was stored. C++ leaves a float outside the
target type undefined, and for an 8- or 16-bit target nvcc converts to 32 bits and keeps the low bits: the PTX is
`cvt.rzi.s32.f32; and.b32 255; setp.eq.s32 127` (uint8: cvt.rzi.u32.f32 and the same mask; int16 and uint16: cvt.rzi
to 32 bits, then cvt.u16.u32), so x is 44 on the GPU, never 127, and C is zeros there (red team, 2026-12-05, read from
the PTX nvcc 13.0 emits for sm_90a). The simulator now gives no verdict where a float converted to an 8- or 16-bit
integer leaves that type's range (grader.pipeline.simulate.expressions.Expressions.no_narrow_conversion)."""

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
            # x just above 300: clamped to int8 it is 127; its low byte (the GPU's) is 44 or so
            flag = T.cast(T.cast(T.abs(acc[i]) * T.float32(0.015625) + T.float32(300), T.int8), T.int32)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(flag == 127, T.cast(acc[i], T.float16), T.float16(0))
    return C
