"""matmul_naive on a 1-D grid (tile row and column from // and %), with the operand tiles in shared
memory under a plain T.serial K loop, and the tile corners computed by a Python helper.
"""

KERNEL = "matmul_naive"

import tilelang
import tilelang.language as T


def corner(tile_index, tiles_per_row, block_m, block_n):
    return (tile_index // tiles_per_row) * block_m, (tile_index % tiles_per_row) * block_n


@tilelang.jit
def matmul_naive(A, B, BLOCK_M: int, BLOCK_N: int, BLOCK_K: int, THREADS: int = 128):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)
    tiles_per_row = T.ceildiv(N, BLOCK_N)
    with T.Kernel(T.ceildiv(M, BLOCK_M) * tiles_per_row, threads=THREADS) as t:
        row0, col0 = corner(t, tiles_per_row, BLOCK_M, BLOCK_N)
        a = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        b = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        T.fill(acc, 0)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[row0, k * BLOCK_K], a)
            T.copy(B[k * BLOCK_K, col0], b)
            T.gemm(a, b, acc)
        T.copy(acc, C[row0, col0])
    return C
