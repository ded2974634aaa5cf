"""Attack: a kernel right in the simulator and wrong on the GPU, for a CPU grade (--device cpu,
--JudgeChecks.device=cpu). gemv computes its sums, then stores each only where `start`, a T.alloc_var of int32 it
never sets, is 0. TileLang declares it in the CUDA without a value (`int start;`): on the GPU it holds whatever
its register held, and nvcc, free to take any value for it, may fold the test either way, so C may be zeros there.
The simulator started every integer buffer a kernel allocates at 0, so the test held, every sum was stored and
every simulated case PASSed. The simulator now runs a kernel that allocates integer memory a second time with
that memory filled at random (grader.pipeline.simulate.unwritten.integer_fill), and a case whose outputs differ
between the two runs gets no CPU verdict: its result depends on a value the GPU leaves undefined."""

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
        start = T.alloc_var(T.int32)  # no initial value: undefined on the GPU, 0 in the old simulator
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.if_then_else(start == 0, T.cast(acc[i], T.float16), T.float16(0))
    return C
