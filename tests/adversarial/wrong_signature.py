"""Adversarial submission: signatures that differ from the stub's.

`add` renames the block parameter (BLOCK_SIZE for BLOCK); `mul_relu` swaps its inputs (B, A);
`add_fragments` returns two outputs where the puzzle has one.
"""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK_SIZE: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK_SIZE), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK_SIZE):
            if bx * BLOCK_SIZE + t < N:
                C[bx * BLOCK_SIZE + t] = A[bx * BLOCK_SIZE + t] + B[bx * BLOCK_SIZE + t]
    return C


@tilelang.jit
def mul_relu(B, A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    B: T.Tensor((N,), T.float16)
    A: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            if bx * BLOCK + t < N:
                C[bx * BLOCK + t] = T.max(A[bx * BLOCK + t] * B[bx * BLOCK + t], 0)
    return C


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    D = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            a[t] = a[t] + b[t]
        T.copy(a, C[bx * BLOCK])
        T.copy(a, D[bx * BLOCK])
    return C, D
