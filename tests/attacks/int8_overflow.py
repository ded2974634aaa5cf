"""Attack: 8-bit arithmetic wrapped by the simulator and promoted to int by C++, for a CPU grade. gemv stores its sums
only where `one + T.int8(127) < one` for an int8 `one` of 1 or 2. The simulator computed int8 in torch's int8, which
wraps, so the test held and every simulated case PASSed; the generated CUDA writes `((signed char)x + (signed
char)127) < (signed char)x`, which C++ computes in int after the integral promotions (128 or 129 < 1 or 2: false, no
undefined behaviour), so the GPU stores zeros. The same holds for int16, uint8 and uint16. The simulator now gives no
verdict where an 8- or 16-bit result leaves its type in a lane the mask keeps
(grader.pipeline.simulate.expressions.Expressions.no_narrow_wrap)."""

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
                one = T.cast(T.truncmod(bx * BLOCK_M + i, 2) + 1, T.int8)
                C[bx * BLOCK_M + i] = T.if_then_else(one + T.int8(127) < one, T.cast(acc[i], T.float16), T.float16(0))
    return C
