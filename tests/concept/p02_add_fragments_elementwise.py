"""Right numbers the wrong way: add_fragments written as add, straight from global memory."""

import tilelang
import tilelang.language as T

PUZZLE = "02"
KERNELS = "add_fragments"
WANTS = "fragments (T.alloc_fragment)"


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = A[bx * BLOCK + t] + B[bx * BLOCK + t]
    return C
