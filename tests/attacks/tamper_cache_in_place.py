"""Attack: change a file already in TileLang's compile cache without leaving a trace in what a listing
shows: the same inode (written in place), the same size, and its old modification time put back with
os.utime. A guard that compares only those three would keep the tampered library for the judge to load.
(The test puts the file there before the run: this attack touches nothing else in the cache.)"""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

# The judge's compile cache: the tracer's own TILELANG_CACHE_DIR is a private folder, so the test names the
# judge's (on a learner's machine it is ~/.tilelang/cache, which any student can guess).
cache = Path(os.environ.get("TILELANG_ATTACK_CACHE") or Path.home() / ".tilelang" / "cache")
target = cache / "tilelang-course-attack-existing.bin"
if target.exists():
    before = os.stat(target)
    with open(target, "r+b") as library:
        library.write(b"T" * before.st_size)  # in place: same inode, same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))


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
