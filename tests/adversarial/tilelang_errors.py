"""Adversarial submission: three kernels TileLang itself rejects.

`add` shifts a float16 value (a dtype error, line 20); `mul_relu` reads a fragment at two different
positions in one T.Parallel loop (TileLang cannot lay it out over the threads, declared on line 33);
`add_fragments` copies a 1-D slice of A into a 2-D fragment (mismatched copy shapes, line 53).
"""

import tilelang
import tilelang.language as T


@tilelang.jit
def add(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        for t in T.Parallel(BLOCK):
            C[bx * BLOCK + t] = (A[bx * BLOCK + t] >> 1) + B[bx * BLOCK + t]
    return C


@tilelang.jit
def mul_relu(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        a = T.alloc_fragment((BLOCK,), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        pair = T.alloc_fragment((BLOCK, 2), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t, u in T.Parallel(BLOCK, 2):
            pair[t, u] = T.if_then_else(u == 0, a[t], b[t])
        for t in T.Parallel(BLOCK):
            a[t] = T.max(pair[t, 0] * pair[(t + 1) % BLOCK, 1], 0)
        T.copy(a, C[bx * BLOCK])
    return C


@tilelang.jit
def add_fragments(A, B, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B: T.Tensor((N,), T.float16)
    C = T.empty((N,), T.float16)
    with T.Kernel(T.ceildiv(N, BLOCK), threads=THREADS) as bx:
        a = T.alloc_fragment((BLOCK, 2), T.float16)
        b = T.alloc_fragment((BLOCK,), T.float16)
        T.copy(A[bx * BLOCK], a)
        T.copy(B[bx * BLOCK], b)
        for t in T.Parallel(BLOCK):
            b[t] = a[t, 0] + b[t]
        T.copy(b, C[bx * BLOCK])
    return C
