"""Attack: replace grader.pipeline.compare.compare with one that compares the reference with itself (the measured
six lines that passed every gemv case before the trust boundary)."""

import tilelang
import tilelang.language as T

import grader.pipeline.compare

_real = grader.pipeline.compare.compare


def _always_equal(name, got, want, *args, **kwargs):
    return _real(name, want.to(got.dtype), want, *args, **kwargs)


grader.pipeline.compare.compare = _always_equal


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
