"""Attack: write a forged reply on the tracer's reply channel (its file descriptor is on the command line):
a reply claiming a traced kernel, with garbage for TIR."""

import json
import os
import sys

import tilelang
import tilelang.language as T

fd = int(sys.argv[-1]) if sys.argv[-1].isdigit() else 3
forged = {"event": "loaded", "problem": "", "trace": ""}
os.write(fd, (json.dumps(forged) + "\n" + json.dumps({"id": 1, "status": "traced", "tir": "{}"}) + "\n").encode())


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
