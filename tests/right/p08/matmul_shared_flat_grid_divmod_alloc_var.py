"""matmul_shared on a 1-D grid: the block's tile row and column come from divmod-style // and % of the
block index by the number of column tiles, and are kept as element offsets in T.alloc_var scalars.
"""

KERNEL = "matmul_shared"

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_shared(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    across = T.ceildiv(N, BLOCK_N)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * across, threads=THREADS) as tile_id:
        a_s = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b_s = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        m0 = T.alloc_var(T.int32)
        n0 = T.alloc_var(T.int32)
        m0 = tile_id // across * BLOCK_M
        n0 = tile_id % across * BLOCK_N
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[m0, ko * BLOCK_K], a_s)
            T.copy(B[ko * BLOCK_K, n0], b_s)
            T.gemm(a_s, b_s, acc)
        T.copy(acc, C[m0, n0])
    return C
