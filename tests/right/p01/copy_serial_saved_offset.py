"""copy_serial keeping the next step's first element in a T.alloc_var: each step saves it in a
scalar (first = start), advances the variable by THREADS at once, and then copies from `first`.

TIR has `first: T.int32 = start[0]`, a let binding with value semantics (it passes on the H200).
The simulator once bound `first` to a 0-d torch view of start's storage (a scalar read at a constant
index returned `data[position]`), so the store `start[0] = start[0] + THREADS` on the next line
changed `first` too: every step copied from one step later and the first THREADS elements of B
stayed NaN. This file keeps that fixed.
"""

KERNEL = "copy_serial"

import tilelang
import tilelang.language as T


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        start = T.alloc_var(T.int32, init=0)
        for _ in T.serial(T.ceildiv(N, THREADS)):
            first = start
            start = start + THREADS
            for t in T.Parallel(THREADS):
                if first + t < N:
                    B[first + t] = A[first + t]
    return B
