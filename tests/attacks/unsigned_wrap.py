"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores output n's only where T.cast(n, uint32) +
T.uint32(4294967295) >= 4294967295. In CUDA's 32-bit unsigned arithmetic the sum wraps to n - 1, so only C[0] is
stored and the rest are zeros; the simulator kept uint32 in int64 (torch's CPU kernels lack uint32) and plain
Python ints for index arithmetic, neither of which wraps, so every sum was stored and every simulated case passed.
The simulator now wraps integer arithmetic to its TIR type's bits (grader.pipeline.simulate.values.fitted), and
casts between integer types too (values.wrapped)."""

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
            # n + (2^32 - 1) in uint32: n - 1 on the GPU (below 2^32 - 1 but for n = 0), n + 2^32 - 1 in int64
            far = T.cast(bx * BLOCK_M + i, T.uint32) + T.uint32(4294967295)
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(
                    far >= T.uint32(4294967295), T.cast(acc[i], T.float16), T.float16(0)
                )
    return C
