"""Attack: plant a file in TileLang's compile cache (where the judge loads compiled host libraries from),
as a learner would plant a library under the key their kernel will have."""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

# The judge's compile cache: the tracer's own TILELANG_CACHE_DIR is a private folder, so the test names the
# judge's (on a learner's machine it is ~/.tilelang/cache, which any student can guess).
cache = Path(os.environ.get("TILELANG_ATTACK_CACHE") or Path.home() / ".tilelang" / "cache")
cache.mkdir(parents=True, exist_ok=True)
(cache / "tilelang-course-attack-planted.so").write_bytes(b"not a library")


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
