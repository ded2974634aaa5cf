"""Attack: a layout on the output. The judge admits T.annotate_layout since puzzle 09 swizzles a shared tile with it
(grader.pipeline.admit.with_layouts_rebuilt); a student who read that lays out C, the output in global memory, so
that every row's store lands on row 0: were it compiled, C would hold one sum and zeros where the comparison looks.
Refused: a layout is admitted only for a tile in shared memory."""

import tilelang
import tilelang.language as T
from tilelang.layout import Layout


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.annotate_layout({C: Layout((M,), lambda i: [i * 0])})
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                acc[i] += T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
        T.copy(acc, C[bx * BLOCK_M])
    return C
