"""copy_threads guarding with the block's end clamped to N (T.min) and the loop index compared with
the number of valid elements of this block, instead of comparing the global index with N.
"""

KERNEL = "copy_threads"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel((N + BLOCK - 1) // BLOCK, threads=THREADS) as bx:
        valid = T.min(N - bx * BLOCK, BLOCK)
        for t in T.Parallel(BLOCK):
            if t < valid:
                B[bx * BLOCK + t] = A[bx * BLOCK + t]
    return B
