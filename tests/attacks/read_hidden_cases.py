"""Attack: read the hidden cases: the environment variable, and the file it names, then leak them in the
error message of a public case (a learner sees those)."""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

path = os.environ.get("TILELANG_COURSE_HIDDEN_CASES", "")
leaked = Path(path).read_text()[:200] if path and Path(path).exists() else "nothing"
raise RuntimeError(f"LEAKED hidden cases: {path} {leaked}")


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
