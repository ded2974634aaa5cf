"""Attack: plant a folder in TileLang's compile cache through a symbolic link: a link in the cache that
points at a folder of the attacker's, holding a "compiled kernel". A folder's link is not a file, so a
guard that only lists the cache's files walks past it, and the judge would load what lies behind it
under the key the link's name gives. The link must be gone before the judge compiles anything."""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

# The judge's compile cache: the tracer's own TILELANG_CACHE_DIR is a private folder, so the test names the
# judge's (on a learner's machine it is ~/.tilelang/cache, which any student can guess).
cache = Path(os.environ.get("TILELANG_ATTACK_CACHE") or Path.home() / ".tilelang" / "cache")
cache.mkdir(parents=True, exist_ok=True)
planted = Path(os.environ.get("TILELANG_ATTACK_DIR", "/tmp")) / "tilelang-course-attack-planted-folder"
planted.mkdir(parents=True, exist_ok=True)
(planted / "kernel_lib.so").write_bytes(b"not a library")
link = cache / "tilelang-course-attack-link"
if link.is_symlink() or link.exists():
    link.unlink()
link.symlink_to(planted, target_is_directory=True)


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
