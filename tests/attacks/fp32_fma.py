"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu), with no build option at all. The simulator rounds a float32 `x * y + c` twice (the product,
then the sum): an H100 run of `acc * 1.1 - s == 0` found no fused multiply-add there. But for an add nvcc's front end
contracts the two into one `fma.rn.f32` in the PTX itself (nvcc 13.0, sm_90a, the default --fmad=true), rounded once.
gemv keeps p = -(acc * 1.1) rounded to float32, computed apart as acc * -2.2 * 0.5 (2.2 is 2 * 1.1 exactly, so the
value is the same and nvcc cannot reuse the product), in shared memory, then stores each sum only where
e = acc * 1.1 + p is 0. Rounded twice e is 0 for every row: every simulated case PASSed. The PTX is
`fma.rn.f32 %f141, %f153, 0f3F8CCCCD, %f137; setp.eq.f32 %p15, %f141, 0f00000000`: e is the product's rounding
error, not 0 for almost every sum, and C is zeros on the GPU (red team, 2026-12-05, read from the PTX; the same
through a T.alloc_var or a fragment: fp32_fma_in_a_register.py). A passing case of a kernel that multiplies and adds
float32 is now simulated a second time with every product kept unrounded through registers and rounded once where
it is added (the interpreter's contract mode), and gets no CPU verdict where that run does not pass too
(grader.pipeline.execute.contracted_differently)."""

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
        p = T.alloc_shared((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            p[i] = acc[i] * T.float32(-2.200000047683716) * T.float32(0.5)  # -(acc * 1.1) rounded once (2.2 = 2 * 1.1)
        for i in T.Parallel(BLOCK_M):
            # apart (the simulator): 0; contracted into one fma.rn.f32 (nvcc): the product's rounding error
            e = acc[i] * T.float32(1.100000023841858) + p[i]
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(e == T.float32(0), T.cast(acc[i], T.float16), T.float16(0))
    return C
