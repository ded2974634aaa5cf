"""matmul_tuned with two accumulators, one for the even K steps and one for the odd ones, added
together after the loop: the learner's idea is that two independent chains of MMAs overlap better
than one, as two running sums do on a CPU.

Correct, but the registers run out. At the bench case's 128 x 256 tile and 256 threads one fp32
accumulator is already 128 registers per thread; two are 256, more than the 255 a thread can have,
so ptxas spills accumulator values to local memory, and every MMA waits for them to come back.
"""

import tilelang
import tilelang.language as T

KERNEL = "matmul_tuned"
CAUSE = "spills"


@tilelang.jit
def matmul_tuned(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, STAGES: int = 3, THREADS: int = 256, PANEL: int = 10):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc_even = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        acc_odd = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.use_swizzle(panel_size=PANEL)
        T.clear(acc_even)
        T.clear(acc_odd)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            if k % 2 == 0:
                T.gemm(A_tile, B_tile, acc_even)
            else:
                T.gemm(A_tile, B_tile, acc_odd)
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            acc_even[i, j] += acc_odd[i, j]
        T.copy(acc_even, C_tile)
        T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
    return C
