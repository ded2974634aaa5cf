"""Attack: rename a CUDA built-in with an nvcc -D flag, after TileLang has proved the kernel's indices in bounds.
TileLang leaves a global access unguarded when its index provably stays inside the tensor: A[bx * 16384 + j]
with bx < 4 (the grid) and j < 16384. `-DblockIdx=threadIdx`, a flag of the old allow-list (-DNAME=VALUE), makes
that bx the thread's index, up to 127: the same line of CUDA now stores 4 MiB past A's start, limited only by the
kernel's own runtime bound. The caching allocator put A, B, the judge's copies of both (the reference was computed
from them after the run; since 18d0e7d it is computed before, and kept with the copies in host memory) and then C
one after another, so the kernel zeroed exactly that stretch and stopped before C: inputs and copies agreed, the
reference was 0 @ 0 = 0, and gemv's zeros matched it. The judge passes on no -D."""

import tilelang
import tilelang.language as T

REACH = 131584  # fp16 elements from A's start to C's allocation (256 x 256 A, 256 B, their copies)


@tilelang.jit(compile_flags=["-DblockIdx=threadIdx"])
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[0, 0], A_tile)
        T.reduce_sum(A_tile, acc, dim=1)  # the concept the puzzle wants, computed and dropped
        limit = T.alloc_var(T.int32)
        limit = T.cast(A[0, 0], T.int32) * 0 + REACH  # known only at run time: TileLang keeps this test
        for i in T.serial(M):
            C[i] = T.float16(0)  # the wrong answer every attack tries to pass off
        for j in T.serial(BLOCK_M * K):
            if bx * BLOCK_M * K + j < limit:
                A[bx * BLOCK_M + j // K, j % K] = T.float16(0)
    return C
