"""Attack: an int32 T.alloc_var written by every lane of a T.Parallel (v = i + 1), then read after the loop, for a
CPU grade: gemv stores its sums only where v == 1. After the nest the simulator kept one value for a local that its
lanes left different: NaN for a float, but for an integer the first lane's, so v was 1 and every simulated case
PASSed. On the GPU every thread keeps its own last value (the CUDA: `int v = 0;`, then `if (threadIdx.x < 64) v =
threadIdx.x + 1;`): only thread 0's rows are stored, 240 of 256 outputs are zeros. The second run with integers at
random did not see it, since every lane writes v. Reading such an integer now gives no verdict
(grader.pipeline.simulate.memory.Memory.no_thread_dependent_read)."""

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
        v = T.alloc_var(T.int32)
        for i in T.Parallel(BLOCK_M):
            v = i + 1
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(v == 1, T.cast(acc[i], T.float16), T.float16(0))
    return C
