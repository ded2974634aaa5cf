"""Attack: a shared tile's layout whose indices read memory. With the layout of A's shared tile computed from a
value loaded from B, where a row lands would depend on the inputs, which no layout TileLang infers does (and which
the simulator, reading tiles by their logical indices, could not follow). Refused: a layout's indices may only be
integer arithmetic of its own inputs."""

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
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        shifted = lambda i, j: [i, (j + T.cast(B[0], T.int32) % 2) % BLOCK_K]  # noqa: E731 (as a student writes it)
        T.annotate_layout({A_tile: Layout((BLOCK_M, BLOCK_K), shifted)})
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                acc[i] += T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
        T.copy(acc, C[bx * BLOCK_M])
    return C
