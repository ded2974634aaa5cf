"""Attack: make an ERROR line display as a green PASS line: the error message erases the line it is on
(ESC[2K, carriage return), then writes a coloured PASS line of its own, and reverses the rest with a
bidirectional override."""

import tilelang
import tilelang.language as T

raise RuntimeError(
    "\x1b[2K\r\x1b[32m  PASS  square_256             M=256 K=256                simulated on CPU: max abs err 0"
    "\x1b[0m\u202e deliaf 1"
)


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
