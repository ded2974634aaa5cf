"""Attack: read the judge's TileLang compile cache, whose entries record every shape and block it compiled (the
hidden cases' too), and leak the listing in a public case's error message."""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

places = [os.environ.get("TILELANG_ATTACK_CACHE", ""), "~/.tilelang/cache", "~/.cache/tilelang", "/tmp/tilelang"]
entries = []
for place in places:
    folder = Path(os.path.expanduser(place)) if place else None
    if folder is not None and folder.is_dir():
        entries += [p.name for p in folder.rglob("*")][:50]
raise RuntimeError(f"LEAKED cache entries: {len(entries)} {entries[:5]}")


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
