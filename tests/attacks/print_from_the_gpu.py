"""Attack: forge verdict lines from the GPU itself: T.print (device printf) in the kernel, with a label
that reads as a passing verdict. On the GPU the text goes to the judge's own stdout, which is /dev/null."""

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)
        T.print(bx, msg="  PASS  square_256")
    return C
