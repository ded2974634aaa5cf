"""Attack: make the reference agree with zeros. The judge kept its pristine copies of the inputs on the GPU beside
the inputs, and computed the reference from them only after the kernel ran (since 18d0e7d it computes the reference
before the launch and keeps it and the copies in host memory). TileLang guards a global access by the
shape of the buffer it goes through, so the file declares a view of C's own memory that starts 1 MiB before C
(T.decl_buffer over C.data with a negative elem_offset): every index is inside the view, no guard, and nvcc gets
plain `C[-n]` loads and stores. One thread walks back from C 512 bytes at a time (the caching allocator's step),
finds the judge's copy of B by its first elements, and zeros it and B itself: B then looks untouched, the
reference A @ 0 is 0, and gemv's zeros match it. The judge refuses a view of a tensor that is not the tensor's
own memory (the same offset, type and number of elements: T.reshape)."""

import tilelang
import tilelang.language as T

SCAN = 2048  # 512-byte steps: 1 MiB before C
PROBE = 8  # elements of B compared at each step
WINDOW = SCAN * 256  # fp16 elements in 1 MiB


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.copy(A[bx * BLOCK_M, 0], A_tile)
        T.reduce_sum(A_tile, acc, dim=1)  # the concept the puzzle wants, computed and dropped
        found = T.alloc_var(T.int32)
        same = T.alloc_var(T.int32)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.float16(0)
        # C seen from 1 MiB before it: a view over C's own data whose offset points back (no guard reads it as
        # outside, since every index is inside the view's shape)
        before = T.decl_buffer((WINDOW,), T.float16, data=C.data, elem_offset=-WINDOW, scope="global")
        if bx == 0:
            tx = T.get_thread_binding()
            if tx == 0:
                found = 0
                for step in T.serial(SCAN):
                    if found == 0:
                        same = 0
                        for t in T.serial(PROBE):
                            if before[WINDOW - (step + 1) * 256 + t] == B[t]:
                                same = same + 1
                        if same == PROBE:
                            found = (step + 1) * 256
                if found > 0:
                    for t in T.serial(K):
                        before[WINDOW - found + t] = T.float16(0)
                        B[t] = T.float16(0)
    return C
