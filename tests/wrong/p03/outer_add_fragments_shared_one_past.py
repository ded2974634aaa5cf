"""outer_add_fragments staging B's slice in shared memory and reading it one element to the right inside
a guard that is off by one (col + 1 <= N, not col < N): every column gets its neighbour's B, and the last
column of each tile reads the element one past the staged slice, which nothing ever loads."""

KERNEL = "outer_add_fragments"
CAUGHT_BY = "gpu"

import tilelang
import tilelang.language as T


@tilelang.jit
def outer_add_fragments(A, B, BLOCK_M: int, BLOCK_N: int, THREADS: int = 256):
    M, N = T.const("M, N")
    A: T.Tensor((M,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        a = T.alloc_fragment((BLOCK_M,), T.float16)
        b = T.alloc_shared((BLOCK_N + 1,), T.float16)
        c = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float16)
        T.copy(A[by * BLOCK_M], a)
        T.copy(B[bx * BLOCK_N], b[0:BLOCK_N])
        for i, j in T.Parallel(BLOCK_M, BLOCK_N):
            if bx * BLOCK_N + j + 1 <= N:
                c[i, j] = a[i] + b[j + 1]
            else:
                c[i, j] = a[i]
        T.copy(c, C[by * BLOCK_M, bx * BLOCK_N])
    return C
