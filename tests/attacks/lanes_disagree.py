"""Attack: a kernel right in the simulator and zeros on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums and scales them by `scale[0]`, a shared float that every lane of
a T.Parallel stores at once: 1 from the last lane, 0 from the others. The simulator stored the lanes in order, so
the last lane's 1 was kept and every simulated case PASSed. On the GPU each lane is a thread, and which thread's
store to one address lands last is not defined: the other 63 threads' 0 is at least as likely, and C is zeros. The
simulator now gives no CPU verdict where lanes of one store put different values in one element of shared or
global memory (grader.pipeline.simulate.memory.Memory.no_lanes_disagree)."""

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
        scale = T.alloc_shared((1,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            scale[0] = T.if_then_else(i == BLOCK_M - 1, T.float32(1), T.float32(0))
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.cast(acc[i] * scale[0], T.float16)
    return C
