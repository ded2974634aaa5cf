"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores each only where `one + 2147483647 < one` for an int32
`one` of at least 1, computed at run time. C and CUDA leave signed overflow undefined, and TileLang's lowering
simplifies as if it never happened: the test is folded to false, and the CUDA stores zeros (read from the generated
device_kernel.cu: `C[...] = half_t(0)`, nothing else). The simulator wrapped the int32 sum as two's complement, so
the test held, every sum was stored and every simulated case PASSed. The simulator now gives no CPU verdict where a
signed +, - or * overflows in a lane it keeps (grader.pipeline.simulate.expressions.Expressions.no_signed_overflow)."""

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
            one = T.cast(acc[i] * acc[i] + T.float32(1), T.int32)  # at least 1, known only at run time
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(one + 2147483647 < one, T.cast(acc[i], T.float16), T.float16(0))
    return C
