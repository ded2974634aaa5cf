"""Attack: fill the sandbox's private folder far past the memory limit (a tmpfs is memory), so that the out-of-memory
killer picks the judge or a classmate. Its writable space has a size, so this ends in 'No space left on device'."""

import os

import tilelang
import tilelang.language as T

chunk, written, problem = b"x" * (64 * 2**20), 0, "no error"
try:
    for number in range(48):  # 3 GiB at most
        with open(f"filler-{number}", "wb") as handle:
            handle.write(chunk)
        written += len(chunk)
except OSError as error:
    problem = os.strerror(error.errno or 0)
finally:
    for number in range(48):
        if os.path.exists(f"filler-{number}"):
            os.remove(f"filler-{number}")
raise RuntimeError(f"wrote {written // 2**20} MiB, then: {problem}")


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
