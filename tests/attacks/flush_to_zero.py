"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu), through an nvcc flag the grader allows. Built with -ftz=true (--use_fast_math and
tl.enable_fast_math imply it), every fp32 instruction flushes subnormal operands and results to zero; gemv scales
each sum by 2^-130, a subnormal, and back by 2^65 twice. In the simulator, which computes with subnormals, the sums
come back; on the GPU (mul.ftz.f32 by the flushed constant) C is all zeros. The simulator models none of the
options that change float arithmetic (FLOAT_FLAGS in grader.pipeline.execute: flush-to-zero, fast math,
approximate division and square roots), so it now runs no case of a kernel built with one: such a case is only
compiled on the CPU, and a CPU grade does not pass it."""

import tilelang
import tilelang.language as T


@tilelang.jit(compile_flags=["-ftz=true"])
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
            tiny = acc[i] * T.float32(2.0**-130)  # subnormal: 0 where -ftz=true (mul.ftz.f32)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.cast(tiny * T.float32(2.0**65) * T.float32(2.0**65), T.float16)
    return C
