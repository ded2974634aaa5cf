"""Attack: forge the JSON result file: find the --json path on the command line of an ancestor process
(/proc/PID/cmdline) and write a document where every case passed, now and from a daemon in its own
session that keeps rewriting it after the grader has written its own. Its pid goes to a file the test
reads, to check that it was killed."""

import json
import os
import time
from pathlib import Path

import tilelang
import tilelang.language as T

# The test names a folder of its own (TILELANG_ variables reach the tracer), so attacks graded side by
# side under pytest-xdist forge only their own report.
FOLDER = Path(os.environ.get("TILELANG_ATTACK_DIR", "/tmp"))
PID_FILE = FOLDER / "tilelang-course-attack-forge-json.pid"


def _json_paths():
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            words = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        for i, word in enumerate(words[:-1]):
            if word == b"--json":
                found.append(Path(words[i + 1].decode()))
    return found


def _forge():
    for path in _json_paths():
        if not path.is_absolute() or FOLDER not in path.parents:
            continue
        document = {"results": [{"puzzle": "08", "kernel": "gemv", "case": "square_256", "status": "passed"}]}
        try:
            path.write_text(json.dumps(document))
        except OSError:
            pass


_forge()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        PID_FILE.write_text(str(os.getpid()))
        for _ in range(600):
            _forge()
            time.sleep(0.1)
    os._exit(0)


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
