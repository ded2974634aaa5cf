"""matmul_shared on a 1-D grid of ceildiv(M, BLOCK_M) * ceildiv(N, BLOCK_N) blocks, whose index is split
into tile row and column by N // BLOCK_N, the column tile count rounded down. When N is not a multiple
of BLOCK_N each row of tiles comes out one tile short: the partial column of tiles is never written."""

KERNEL = "matmul_shared"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * T.ceildiv(N, BLOCK_N), threads=THREADS) as t:
        per_row = T.max(N // BLOCK_N, 1)
        by = t // per_row
        bx = t % per_row
        a_s = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b_s = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], a_s)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], b_s)
            T.gemm(a_s, b_s, acc)
        T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])
    return C
