"""Attack: fork at import, children that sleep (and one in its own session), then sleep: the grader must
time out and leave none of them alive. Their pids go to a file the test reads."""

import os
import time
from pathlib import Path

import tilelang
import tilelang.language as T

PID_FILE = Path(os.environ.get("TILELANG_ATTACK_DIR", "/tmp")) / "tilelang-course-attack-fork.pids"
PID_FILE.write_text("")
for n in range(16):
    if os.fork() == 0:
        if n == 0:
            os.setsid()
        with PID_FILE.open("a") as pids:
            pids.write(f"{os.getpid()}\n")
        time.sleep(100000)
        os._exit(0)
time.sleep(100000)


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
